"""A test's worker dies with the test run: kill the process that started a real Celery worker (as a crash, or as
SIGTERM / SIGINT from a person stopping the run) and no process of that worker is left."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent.parent

RUNNER = """
import os, sys, time
import django
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "causalqa_site.settings")
django.setup()
from tests.workers import CeleryWorker
worker = CeleryWorker(log_path=sys.argv[1], concurrency=1)
worker.start(wait=90)
print(worker.process.pid, flush=True)
time.sleep(600)
"""


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
        state, process_group = fields[0], int(fields[2])
        if process_group == group and state != "Z":
            alive.append(int(entry.name))
    return alive


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads the process table from /proc")
@pytest.mark.parametrize(
    "how", [signal.SIGKILL, signal.SIGTERM, signal.SIGINT], ids=["crash", "sigterm", "sigint"]
)
def test_a_killed_test_run_leaves_no_worker(tmp_path, how):
    runner = subprocess.Popen(
        [sys.executable, "-c", RUNNER, str(tmp_path / "worker.log")],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        env={**os.environ, "CAUSALQA_VAR_DIR": str(tmp_path)},
    )
    try:
        group = int(runner.stdout.readline() or 0)
        assert group, (tmp_path / "worker.log").read_text(errors="replace")[-2000:]
        assert alive_in_group(group), "the worker runs"
        runner.send_signal(how)
        runner.wait(timeout=30)
        deadline = time.monotonic() + 15
        while alive_in_group(group) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not alive_in_group(group), f"left running after {how.name}: {alive_in_group(group)}"
    finally:
        if runner.poll() is None:
            runner.kill()
