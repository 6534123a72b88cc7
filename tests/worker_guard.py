"""Run a test's Celery worker so that it dies with the test process, whatever ends that process.

``python -m tests.worker_guard TEST_PID CELERY_ARGUMENTS...`` is ``python -m celery CELERY_ARGUMENTS...`` in the
same process, which first asks to die with the test process TEST_PID (its parent): on Linux through the kernel's
parent-death signal (SIGKILL, which nothing in the worker can catch or delay), elsewhere through a thread that
watches the parent's pid and kills the worker's process group once the parent is gone. What the worker starts
dies with it: its embedded beat asks for the same signal against the worker, and Celery's own prefork pool
processes already do. A test run stopped by SIGTERM, SIGINT or a crash thus leaves no worker consuming its queue.

The guard runs inside the worker rather than as a process above it, so that the test still holds the worker's
own process: waiting for it returns only once the kernel has closed the worker's broker connections. A process
above the worker is reaped a moment before the killed worker's sockets are closed; a Redis BRPOP the dying
worker had pending then still takes the next message of the queue (the ping of a worker started again at
once, which no one then answers).

The parent-death signal comes when the thread that started the process ends, not only the process: start
workers from the test's main thread (fixtures do).
"""

import contextlib
import ctypes
import ctypes.util
import os
import signal
import sys
import threading
import time

PR_SET_PDEATHSIG = 1
WATCH_SECONDS = 0.2


def parent_death_signal(signum: int) -> bool:
    """Ask the kernel for ``signum`` when this process's parent ends; False where there is no such request."""
    if not sys.platform.startswith("linux"):
        return False
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        return libc.prctl(PR_SET_PDEATHSIG, signum, 0, 0, 0) == 0
    return False


def end_group() -> None:
    """SIGKILL to this process's group: the worker and every process it started."""
    os.killpg(os.getpgrp(), signal.SIGKILL)


def watch_parent(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(WATCH_SECONDS)
    end_group()


def die_with(parent: int, *, fallback_watch: bool) -> None:
    """End this process when ``parent`` ends, even if it already has (the request comes after the fork)."""
    if parent_death_signal(signal.SIGKILL):
        if os.getppid() != parent:
            os.kill(os.getpid(), signal.SIGKILL)
    elif fallback_watch:
        threading.Thread(target=watch_parent, args=(parent,), name="worker-guard", daemon=True).start()


def main(argv: list[str]) -> None:
    from celery.signals import beat_embedded_init

    test_process, worker = int(argv[0]), os.getpid()
    die_with(test_process, fallback_watch=True)

    @beat_embedded_init.connect(weak=False)
    def beat_dies_with_the_worker(**_kwargs) -> None:
        # Without the kernel's signal the worker's watching thread ends the whole group, beat included.
        die_with(worker, fallback_watch=False)

    from celery.__main__ import main as celery

    sys.argv = ["celery", *argv[1:]]
    celery()


if __name__ == "__main__":
    main(sys.argv[1:])
