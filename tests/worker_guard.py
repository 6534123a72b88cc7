"""Run a test's worker so that it dies with the test process, whatever ends that process.

``python -m tests.worker_guard PARENT_PID COMMAND...`` runs COMMAND as its child, in the process group the guard
leads, forwards SIGTERM and SIGINT to it (a test's orderly stop), and ends the whole group (the worker and what
it started: its embedded beat, its pool's processes) as soon as the test process PARENT_PID is gone: at once
through Linux's parent-death signal, and, where that is missing, within a fifth of a second by watching its
parent's pid. A test run stopped by SIGTERM, SIGINT or a crash thus leaves no worker consuming its queue.
"""

import contextlib
import ctypes
import os
import signal
import subprocess
import sys
import time

PR_SET_PDEATHSIG = 1
WATCH_SECONDS = 0.2


def end_everything(*_args) -> None:
    """SIGKILL to the guard's process group: the worker, its children and the guard itself."""
    os.killpg(os.getpgrp(), signal.SIGKILL)


def parent_death_signal(signum: int) -> None:
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(PR_SET_PDEATHSIG, signum)


def main(argv: list[str]) -> int:
    parent, command = int(argv[0]), argv[1:]
    signal.signal(signal.SIGUSR1, end_everything)
    parent_death_signal(signal.SIGUSR1)
    if os.getppid() != parent:  # the test process died before the signal was asked for
        end_everything()
    child = subprocess.Popen(command)

    def forward(signum, _frame):
        with contextlib.suppress(ProcessLookupError):
            child.send_signal(signum)

    signal.signal(signal.SIGTERM, forward)
    signal.signal(signal.SIGINT, forward)
    while child.poll() is None:
        if os.getppid() != parent:
            end_everything()
        time.sleep(WATCH_SECONDS)
    return child.returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
