"""`make run` stops cleanly: SIGTERM or SIGINT to the launcher stops gunicorn and the worker, frees the port,
and the launcher exits."""

import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def port_is_free(port: int) -> bool:
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


def serving(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(0.5)
        return sock.connect_ex(("127.0.0.1", port)) == 0


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is gone for our purposes (its parent, the launcher, has exited).
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.exists() and stat.read_text().split(") ")[-1].startswith("Z"))


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_the_launcher_stops_the_server_and_the_worker_on_a_signal(tmp_path, signum):
    port = free_port()
    env = {
        **os.environ,
        "PORT": str(port),
        "CAUSALQA_VAR_DIR": str(tmp_path),
        "PYTHONUNBUFFERED": "1",
        "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
    }
    env.pop("REDIS_URL", None)
    log = tmp_path / "launcher.log"
    with log.open("w") as out:
        launcher = subprocess.Popen(
            [sys.executable, "-m", "causalqa_site.launcher"],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
        try:
            deadline = time.monotonic() + 120
            while not serving(port):
                assert launcher.poll() is None, f"the launcher ended early:\n{log.read_text()}"
                assert time.monotonic() < deadline, f"nothing listens on {port}:\n{log.read_text()}"
                time.sleep(0.3)
            pids = {name: int(pid) for name, pid in re.findall(r"(\w+) pid (\d+)", log.read_text())}
            assert {"web", "worker"} <= set(pids), log.read_text()
            launcher.send_signal(signum)
            returncode = launcher.wait(timeout=60)
        finally:
            if launcher.poll() is None:
                launcher.kill()
    assert returncode == 0, log.read_text()
    assert "stopped." in log.read_text()
    assert port_is_free(port), f"port {port} is still taken after the launcher exited"
    still = [name for name, pid in pids.items() if alive(pid)]
    assert still == [], f"still running after the launcher exited: {still}"


def test_a_second_signal_while_stopping_changes_nothing(monkeypatch):
    """A SIGTERM to `make run`'s process group reaches the launcher twice (make forwards it to the launcher it
    started): the second must not interrupt the stop with a traceback."""
    from causalqa_site import launcher

    monkeypatch.setattr(launcher, "_stopping", False)
    with pytest.raises(launcher.Stop):
        launcher._stop(signal.SIGTERM, None)
    launcher._stop(signal.SIGTERM, None)
    launcher._stop(signal.SIGINT, None)
