"""`make run`: the web server, a Celery worker and Celery beat (the periodic sweep of stale work) side by side.

Ctrl-C (SIGINT) or SIGTERM (an IDE's stop button, systemd, a script) stops them all: the launcher
forwards SIGTERM to each, waits for them to finish (gunicorn's graceful shutdown, the worker's warm
one), kills what is still running after ``STOP_SECONDS``, and exits. The children run in their own
sessions, so a terminal's Ctrl-C reaches them once, through the launcher, and not twice.

On the embedded default the worker uses kombu's filesystem transport, so nothing
needs to be installed or started by hand. With REDIS_URL set it uses Redis.

Beside them it starts the demo model (``generation.demo_model``: scripted, not a language model) on
``DEMO_LLM_PORT`` (default: ``PORT`` + 1 when free, else a free port; ``0``: not started) and registers it as
the site-wide endpoint "demo model (scripted — not a language model)".
"""

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time

from django.conf import settings

STOP_SECONDS = 20


class Stop(Exception):
    """Raised in the main loop by the signal handler."""


# Set by the first signal. Further ones change nothing: a SIGTERM to `make run`'s process group (an IDE's stop
# button, `kill -- -PGID`, systemd) reaches the launcher twice, once directly and once forwarded by make.
_stopping = False


def _stop(signum, frame):
    global _stopping
    if _stopping:
        return
    _stopping = True
    raise Stop(signal.Signals(signum).name)


def _port_is_free(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


def demo_model_port(port: str) -> int | None:
    """Where the demo model listens: DEMO_LLM_PORT, else PORT + 1 when free, else a port the system chooses;
    None when DEMO_LLM_PORT is 0."""
    wanted = os.environ.get("DEMO_LLM_PORT", "").strip()
    if wanted:
        return int(wanted) or None
    if port.isdigit() and int(port) < 65535 and _port_is_free(int(port) + 1):
        return int(port) + 1
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _register_demo_model(demo_port: int | None) -> str:
    """Register (or switch off) the demo model's site-wide endpoint; what to tell the person."""
    from django.db import DatabaseError

    from generation.services.demo import demo_endpoint_register, demo_endpoint_switch_off

    try:
        if demo_port is None:
            demo_endpoint_switch_off()
            return "  demo model: not started (DEMO_LLM_PORT=0)"
        endpoint = demo_endpoint_register(f"http://127.0.0.1:{demo_port}/v1")
    except DatabaseError:
        return (
            "  demo model: started, but not registered (the database is not migrated: run manage.py migrate)"
        )
    return f"  model endpoint “{endpoint.name}” at {endpoint.base_url}: scripted text, not a language model"


def _children(python: str, port: str, demo_port: int | None = None) -> dict[str, list[str]]:
    commands = {
        "worker": [
            python,
            "-m",
            "celery",
            "-A",
            "causalqa_site",
            "worker",
            "--pool=threads",
            "--concurrency=8",
            "--loglevel=WARNING",
            "-Q",
            settings.CELERY_TASK_DEFAULT_QUEUE,
            "-n",
            f"local-{os.getpid()}@%h",
        ],
        "web": [
            python,
            "-m",
            "gunicorn",
            "causalqa_site.wsgi",
            "--bind",
            f"127.0.0.1:{port}",
            "--workers",
            "2",
            "--threads",
            "4",
            "--access-logfile",
            "-",
            "--log-level",
            "warning",
            "--graceful-timeout",
            "10",
        ],
    }
    if (
        settings.CELERY_BEAT_SCHEDULE
    ):  # the periodic sweep of stale work (jobs, runs, releases, topic runs, imports)
        commands["beat"] = [
            python,
            "-m",
            "celery",
            "-A",
            "causalqa_site",
            "beat",
            "--loglevel=WARNING",
            f"--schedule={settings.CELERY_BEAT_SCHEDULE_FILENAME}",
        ]
    if demo_port is not None:
        commands["model"] = [python, "-m", "generation.demo_model", "--port", str(demo_port)]
    return commands


def stop_children(children: dict[str, subprocess.Popen], timeout: float = STOP_SECONDS) -> None:
    """SIGTERM to each child still running, wait for all of them, then kill the process group of any left."""
    for child in children.values():
        if child.poll() is None:
            child.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + timeout
    for name, child in children.items():
        try:
            child.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            print(f"  {name} did not stop within {timeout:.0f} s; killing it", flush=True)
            with contextlib.suppress(ProcessLookupError):
                os.killpg(child.pid, signal.SIGKILL)  # its own session: the master and its workers
            child.wait()


def main() -> int:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "causalqa_site.settings")
    import django

    django.setup()
    port = os.environ.get("PORT", "8000")
    global _stopping
    _stopping = False
    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, _stop)
    children: dict[str, subprocess.Popen] = {}
    status = 0
    try:
        demo_port = demo_model_port(port)
        for name, command in _children(sys.executable, port, demo_port).items():
            children[name] = subprocess.Popen(
                command, start_new_session=True, stdout=subprocess.DEVNULL if name == "model" else None
            )
        broker = "Redis" if settings.REDIS_URL else "the filesystem (no server)"
        database = settings.DATABASES["default"]["ENGINE"].rsplit(".", 1)[-1]
        print(f"\nCausalQA Studio is running at http://127.0.0.1:{port}/", flush=True)
        # The processes first: whoever supervises the launcher can know them before the site answers.
        print(
            f"  database: {database}; task broker: {broker}; "
            + ", ".join(f"{name} pid {child.pid}" for name, child in children.items()),
            flush=True,
        )
        print(_register_demo_model(demo_port), flush=True)
        print(
            "  sign in with one of the demo accounts (admin/admin, curator/curator, annotator1/annotator1);",
            flush=True,
        )
        print("  the documentation is in docs/ (make docs builds it); press Ctrl-C to stop.\n", flush=True)
        while True:
            ended = [name for name, child in children.items() if child.poll() is not None]
            if ended:
                print(f"  {', '.join(ended)} stopped on its own; stopping the rest", flush=True)
                status = 1
                break
            time.sleep(0.5)
    except Stop as stop:
        print(f"\n{stop}: stopping…", flush=True)
    finally:
        # A second Ctrl-C while stopping must not leave children behind: ignore it until they are gone.
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        stop_children(children)
    print("stopped.", flush=True)
    return status


if __name__ == "__main__":
    sys.exit(main())
