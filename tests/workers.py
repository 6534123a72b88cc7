"""Real Celery worker processes for tests (no eager mode, no in-process fakes)."""

import contextlib
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

from django.db import connection

from causalqa_site.celery import app, ping

ROOT = Path(__file__).resolve().parent.parent
# Settings for a worker that notices a dead colleague within seconds (tests that kill workers).
QUICK_JOB_SETTINGS = {
    "GENERATION_HEARTBEAT_SECONDS": "0.3",
    "GENERATION_STALE_SECONDS": "2",
    "GENERATION_LEASE_SECONDS": "3",
    "GENERATION_BACKOFF_SECONDS": "0.05",
}


def database_url_for_current_connection() -> str:
    """The URL of the database the tests are using right now (the test database)."""
    cfg = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{Path(cfg['NAME']).resolve()}"
    user = cfg.get("USER") or ""
    password = f":{cfg['PASSWORD']}" if cfg.get("PASSWORD") else ""
    auth = f"{user}{password}@" if user else ""
    port = f":{cfg['PORT']}" if cfg.get("PORT") else ""
    return f"postgres://{auth}{cfg.get('HOST') or 'localhost'}{port}/{cfg['NAME']}"


class CeleryWorker:
    """A worker process on a queue of its own; the test process sends to that queue while it runs."""

    def __init__(
        self, log_path: Path, concurrency: int = 4, pool: str = "threads", extra_env: dict | None = None
    ):
        self.queue = f"test-{uuid.uuid4().hex[:10]}"
        self.log_path = Path(log_path)
        self.concurrency = concurrency
        self.pool = pool
        self.extra_env = extra_env or {}
        self.process: subprocess.Popen | None = None
        self._previous_queue = None

    def command(self) -> list[str]:
        """``celery worker`` under ``tests.worker_guard``: it dies with this test process, however that ends."""
        return [
            sys.executable,
            "-m",
            "tests.worker_guard",
            str(os.getpid()),
            "-A",
            "causalqa_site",
            "worker",
            f"--pool={self.pool}",
            f"--concurrency={self.concurrency}",
            "-Q",
            self.queue,
            "-n",
            f"{self.queue}@%h",
            "--without-heartbeat",
            "--without-gossip",
            "--without-mingle",
            "--loglevel=INFO",
            # Celery beat inside the worker sends the periodic sweep of stale work (production runs it apart).
            "--beat",
            f"--schedule={self.log_path.with_suffix('.beat')}",
        ]

    def start(self, wait: float = 60.0) -> None:
        if self._previous_queue is None:
            self._previous_queue = app.conf.task_default_queue
            app.conf.task_default_queue = self.queue
        env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "causalqa_site.settings",
            "DATABASE_URL": database_url_for_current_connection(),
            "CELERY_QUEUE": self.queue,
            "PYTHONUNBUFFERED": "1",
            "STALE_SWEEP_SECONDS": "0.5",
            **self.extra_env,
        }
        with open(self.log_path, "ab") as log:  # the child keeps its own copy of the descriptor
            # A session of its own: the worker's embedded beat is a child process, which a kill of the
            # worker alone would leave running after the test.
            self.process = subprocess.Popen(
                self.command(),
                cwd=ROOT,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        self.wait_ready(wait)

    def wait_ready(self, wait: float) -> None:
        result = ping.apply_async(args=["ready"], queue=self.queue)
        try:
            assert result.get(timeout=wait) == "ready"
        except Exception as exc:  # noqa: BLE001 - show the worker's log with whatever went wrong
            raise RuntimeError(f"worker did not start: {exc}\n{self.log()}") from exc

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def kill(self) -> None:
        """SIGKILL: the worker gets no chance to clean up (as when a machine dies).

        The wait is for the worker's own process: it returns once the kernel has closed the worker's broker
        connections, so no message sent after it can go to a receive the dead worker left pending."""
        if self.process and self.process.poll() is None:
            self._kill_group()
            self.process.wait(timeout=10)

    def _kill_group(self) -> None:
        """SIGKILL to the worker and every process it started (its beat)."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self._kill_group()
                self.process.wait(timeout=5)
        if self.process:
            self._kill_group()  # whatever the worker left behind
        if self._previous_queue is not None:
            app.conf.task_default_queue = self._previous_queue
            self._previous_queue = None

    def wait_for(self, predicate, timeout: float = 30.0, interval: float = 0.1):
        """Poll ``predicate()`` until it returns something truthy; fail with the worker log."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            value = predicate()
            if value:
                return value
            time.sleep(interval)
        raise AssertionError(f"condition not met within {timeout}s; worker log:\n{self.log()[-4000:]}")
