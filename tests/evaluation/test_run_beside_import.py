"""A large import of questions while a benchmark run is in progress in a real worker: the import commits chunk
by chunk, so the run's heartbeats and lease renewals (every 0.3 s, a lease of 3 s) are never starved of the
database, even on SQLite where a writer holds the whole file: the run is never taken over and never fails."""

import csv
import io
import itertools
import threading
import time

import pytest

from annotation.importing import questions_import, service
from annotation.models import ImportBatch, Item, Project
from evaluation.models import EvalRun
from evaluation.runs.services import run_create
from tests.evaluation.runs import mc_items, release_of
from tests.fake_llm import Reply
from tests.workers import QUICK_JOB_SETTINGS

pytestmark = pytest.mark.services
ROWS = 150_000
# The import reads its rows at a pace that makes it outlast the run's lease on any machine: a pause of
# PAUSE_SECONDS every PAUSE_EVERY rows (3.75 s in all), inside whatever transaction the import writes in.
PAUSE_EVERY, PAUSE_SECONDS = 10_000, 0.25
# The run answers this many questions, then waits for the import to end: both overlap on any machine.
ANSWERED_BEFORE_WAITING = 30


def _large_file(rows: int) -> bytes:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["id", "question", "topic"])
    for n in range(rows):
        writer.writerow(
            [f"q{n}", f"Por que a inflação sobe quando os juros caem no caso número {n}?", f"T{n % 40}"]
        )
    return out.getvalue().encode()


def _paced(rows):
    for n, row in enumerate(rows, start=1):
        yield row
        if n % PAUSE_EVERY == 0:
            time.sleep(PAUSE_SECONDS)


def test_a_large_import_beside_a_running_benchmark_takes_nothing_from_it(
    worker, project, endpoint, fake_llm, monkeypatch
):
    mc_items(project, 40)
    release = release_of(project, ratios=(0.0, 0.0, 1.0))
    fake_llm.latency = 0.25
    endpoint.max_concurrency = 1
    endpoint.save()
    imported, answered = threading.Event(), itertools.count()

    def answer(received):
        if next(answered) >= ANSWERED_BEFORE_WAITING:
            imported.wait(timeout=30)
        return Reply.json({"answer": "B"})

    fake_llm.responder = answer
    committed_chunks = service._committed_chunks
    monkeypatch.setattr(service, "_committed_chunks", lambda items: committed_chunks(_paced(items)))
    run = run_create(project=project, release=release, endpoints=[endpoint], conditions=["zero-shot"])
    worker.wait_for(lambda: EvalRun.objects.get(pk=run.pk).status == EvalRun.Status.RUNNING, timeout=60)

    target = Project.objects.create(name="Large import", slug="large-import")
    data = _large_file(ROWS)
    started = time.monotonic()
    try:
        batch = questions_import(project=target, data=data, filename="large.csv", length_bounds_on=False)
        took = time.monotonic() - started
        still_running = EvalRun.objects.get(pk=run.pk).status == EvalRun.Status.RUNNING
    finally:
        imported.set()
    # The import lasted longer than the run's lease (on SQLite one transaction around it took the run over),
    # and the run was in progress all along.
    assert took > float(QUICK_JOB_SETTINGS["GENERATION_LEASE_SECONDS"])
    assert still_running, "the run was in progress all along the import"
    assert (batch.status, batch.funnel["imported"]) == (ImportBatch.Status.DONE, ROWS)
    assert Item.objects.filter(project=target).count() == ROWS

    worker.wait_for(lambda: EvalRun.objects.get(pk=run.pk).is_finished, timeout=180)
    run.refresh_from_db()
    assert run.status == EvalRun.Status.SUCCEEDED, run.error
    assert run.resumed == 0 and [job.resumed for job in run.jobs.all()] == [0] * run.jobs.count()
    assert "database is locked" not in worker.log_path.read_text()
