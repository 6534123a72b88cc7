"""The peer, measured in the same run: Label Studio's own server on SQLite, importing the same questions.

The first run installs ``label-studio`` into a virtualenv of its own under ``var/peer/`` (ignored by git);
later runs reuse it and its migrated SQLite data directory. Each measurement starts the server on a free
port, creates a project with a text labelling config, posts the questions as tasks to its import API and
times until the project's task count, read through the API, reaches the number posted.
"""

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import requests

VERSION = "1.23.2"
ROOT = Path(__file__).resolve().parent.parent / "var" / "peer"
VENV = ROOT / f"label-studio-{VERSION}"
DATA = ROOT / f"label-studio-{VERSION}-data"
USER, PASSWORD = "bench@example.com", "bench-peer-password"
CONFIG = (
    '<View><Text name="text" value="$text"/><Choices name="causal" toName="text">'
    '<Choice value="sim"/><Choice value="não"/></Choices></View>'
)


# The peer's own requirements leave these open; their later releases no longer run it (sentry-sdk 3 refuses
# the options Label Studio 1.23.2 starts it with).
PEER_PINS = ["sentry-sdk<3"]


def install() -> Path:
    python = VENV / "bin" / "python"
    marker = VENV / ".installed"
    if not marker.exists():
        ROOT.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
        subprocess.run(
            [str(python), "-m", "pip", "install", "-q", f"label-studio=={VERSION}", *PEER_PINS], check=True
        )
        marker.touch()
    return python


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Server:
    """Label Studio's server in a process group of its own, stopped by ``close``."""

    def __init__(self, timeout: float = 1800):
        python = install()
        DATA.mkdir(parents=True, exist_ok=True)
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        env = dict(
            os.environ,
            LABEL_STUDIO_BASE_DATA_DIR=str(DATA),
            DJANGO_DB="sqlite",
            LOG_LEVEL="WARNING",
            LABEL_STUDIO_DISABLE_SIGNUP_WITHOUT_LINK="false",
            DATA_UPLOAD_MAX_MEMORY_SIZE=str(1 << 30),
            DATA_UPLOAD_MAX_NUMBER_FIELDS=str(10**7),
        )
        for name in ("DATABASE_URL", "DJANGO_SETTINGS_MODULE", "REDIS_URL", "CAUSALQA_VAR_DIR"):
            env.pop(name, None)
        self.log = open(ROOT / "server.log", "ab")  # noqa: SIM115 - closed by close()
        self.process = subprocess.Popen(
            [
                str(python),
                "-m",
                "label_studio.server",
                "start",
                "--no-browser",
                "--data-dir",
                str(DATA),
                "--host",
                self.url,
                "--internal-host",
                "127.0.0.1",
                "-p",
                str(self.port),
                "--username",
                USER,
                "--password",
                PASSWORD,
            ],
            env=env,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(
                    f"Label Studio exited with {self.process.returncode}; see {ROOT / 'server.log'}"
                )
            try:
                if requests.get(f"{self.url}/health", timeout=5).ok:
                    break
            except requests.RequestException:
                pass
            time.sleep(2)
        else:
            self.close()
            raise RuntimeError(f"Label Studio did not answer in {timeout:.0f} s; see {ROOT / 'server.log'}")
        self.session = requests.Session()
        self.session.get(f"{self.url}/user/login/", timeout=60)
        answer = self.session.post(
            f"{self.url}/user/login/",
            data={
                "email": USER,
                "password": PASSWORD,
                "csrfmiddlewaretoken": self.session.cookies.get("csrftoken", ""),
            },
            headers={"Referer": f"{self.url}/user/login/"},
            timeout=60,
        )
        answer.raise_for_status()
        self.session.headers["X-CSRFToken"] = self.session.cookies.get("csrftoken", "")
        self.session.headers["Referer"] = self.url

    def api(self, method: str, path: str, **kwargs):
        answer = self.session.request(method, f"{self.url}{path}", timeout=3600, **kwargs)
        if not answer.ok:
            raise RuntimeError(f"Label Studio {method} {path}: {answer.status_code} {answer.text[:300]}")
        return answer.json() if answer.content else None

    def time_import(self, questions: list[str]) -> float:
        """Seconds from posting the tasks to the project counting all of them, in a new project, started with
        what was written before on disk (as the import beside it is)."""
        os.sync()
        project = self.api(
            "POST", "/api/projects/", json={"title": f"bench {time.time():.0f}", "label_config": CONFIG}
        )
        body = json.dumps([{"text": text} for text in questions]).encode()
        try:
            started = time.perf_counter()
            self.api(
                "POST",
                f"/api/projects/{project['id']}/import",
                data=body,
                headers={"Content-Type": "application/json"},
            )
            while self.api("GET", f"/api/projects/{project['id']}/")["task_number"] < len(questions):
                time.sleep(0.2)
            return time.perf_counter() - started
        finally:
            self.api("DELETE", f"/api/projects/{project['id']}/")

    def close(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
        self.log.close()


if __name__ == "__main__":
    server = Server()
    try:
        print(
            server.time_import(
                [f"pergunta {n}?" for n in range(int(sys.argv[1]) if len(sys.argv) > 1 else 100)]
            )
        )
    finally:
        server.close()
