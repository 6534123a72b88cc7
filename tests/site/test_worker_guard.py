"""A test's worker dies with the test run: a pytest run starts a real Celery worker and is then killed (as a
crash, or by SIGTERM / SIGINT from a person stopping it) before it stops the worker; no process of that worker
may be left."""

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent.parent

# The test of the run that is killed: it starts a worker, says which process group it leads (the worker runs in
# a session of its own) and waits, never stopping the worker itself.
RUN_THAT_IS_KILLED = """
import time
from pathlib import Path

from tests.workers import CeleryWorker


def test_starts_a_worker_and_waits(tmp_path):
    here = Path(__file__).parent
    # No periodic sweep within the test: this run has no database of its own for it to look into.
    worker = CeleryWorker(log_path=here / "worker.log", concurrency=1, extra_env={"STALE_SWEEP_SECONDS": "3600"})
    worker.start(wait=120)
    (here / "group").write_text(str(worker.process.pid))
    time.sleep(600)
"""


def interruptible() -> None:
    """In the run's process, before it starts: SIGINT as a terminal's Ctrl-C delivers it. A process that
    ignores SIGINT passes that on to what it starts, and Python started so never raises KeyboardInterrupt: the
    run would wait out its sleep whatever this test sends it. A full suite's process has been seen ignoring it
    by the time this test runs."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def alive_in_group(group: int) -> list[int]:
    """The processes of ``group`` that are not yet dead (zombies, which only wait to be reaped, do not count)."""
    alive = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == group and fields[0] != "Z":
            alive.append(int(entry.name))
    return alive


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads the process table from /proc")
@pytest.mark.parametrize(
    "how", [signal.SIGKILL, signal.SIGTERM, signal.SIGINT], ids=["crash", "sigterm", "sigint"]
)
def test_a_killed_test_run_leaves_no_worker(tmp_path, how):
    (tmp_path / "test_killed_run.py").write_text(RUN_THAT_IS_KILLED)
    group_file = tmp_path / "group"
    with open(tmp_path / "run.log", "wb") as output:
        run = subprocess.Popen(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-c", os.devnull]
            + ["--rootdir", str(tmp_path), str(tmp_path / "test_killed_run.py")],
            cwd=ROOT,
            stdout=output,
            stderr=subprocess.STDOUT,
            preexec_fn=interruptible,
            env={
                **os.environ,
                "DJANGO_SETTINGS_MODULE": "causalqa_site.settings",
                "CAUSALQA_VAR_DIR": str(tmp_path / "var"),
                # A run that does not end when told: SIGABRT then prints where each of its threads stands.
                "PYTHONFAULTHANDLER": "1",
            },
        )
    group = 0
    try:
        deadline = time.monotonic() + 150
        while not group_file.exists() and run.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
        assert group_file.exists(), f"the run started no worker:\n{tail(tmp_path / 'run.log')}"
        group = int(group_file.read_text())
        while len(alive_in_group(group)) < 2 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert len(alive_in_group(group)) >= 2, "the worker and its embedded beat run"

        run.send_signal(how)
        try:
            run.wait(timeout=60)
        except subprocess.TimeoutExpired:
            run.send_signal(signal.SIGABRT)
            with contextlib.suppress(subprocess.TimeoutExpired):
                run.wait(timeout=10)
            pytest.fail(
                f"the run did not end within 60 s of {how.name}; where it stood:\n{tail(tmp_path / 'run.log')}"
            )
        deadline = time.monotonic() + 15
        while alive_in_group(group) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not alive_in_group(group), f"left running after {how.name}: {alive_in_group(group)}"
    finally:
        if run.poll() is None:
            run.kill()
            run.wait()
        if group:  # whatever a failure left, so that this test leaves nothing either
            with contextlib.suppress(ProcessLookupError):
                os.killpg(group, signal.SIGKILL)


def tail(path: Path) -> str:
    return path.read_text(errors="replace")[-4000:] if path.exists() else f"(no {path.name})"
