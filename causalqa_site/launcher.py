"""`make run`: the web server, a Celery worker and Celery beat (the periodic sweep of stale work) side by side.

Ctrl-C (SIGINT) or SIGTERM (an IDE's stop button, systemd, a script) stops them all: the launcher
forwards SIGTERM to each, waits for them to finish (gunicorn's graceful shutdown, the worker's warm
one), kills what is still running after ``STOP_SECONDS``, and exits. The children run in their own
sessions, so a terminal's Ctrl-C reaches them once, through the launcher, and not twice.

On the embedded default the worker uses kombu's filesystem transport, so nothing
needs to be installed or started by hand. With REDIS_URL set it uses Redis.
"""

import contextlib
import os
import signal
import subprocess
import sys
import time

from django.conf import settings

STOP_SECONDS = 20


class Stop(Exception):
    """Raised in the main loop by the signal handler."""


def _stop(signum, frame):
    raise Stop(signal.Signals(signum).name)


def _children(python: str, port: str) -> dict[str, list[str]]:
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
    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, _stop)
    children: dict[str, subprocess.Popen] = {}
    status = 0
    try:
        for name, command in _children(sys.executable, port).items():
            children[name] = subprocess.Popen(command, start_new_session=True)
        broker = "Redis" if settings.REDIS_URL else "the filesystem (no server)"
        database = settings.DATABASES["default"]["ENGINE"].rsplit(".", 1)[-1]
        print(f"\nCausalQA Studio is running at http://127.0.0.1:{port}/", flush=True)
        print(
            f"  database: {database}; task broker: {broker}; "
            + ", ".join(f"{name} pid {child.pid}" for name, child in children.items()),
            flush=True,
        )
        print("  sign in with one of the demo accounts above; press Ctrl-C to stop.\n", flush=True)
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
