"""A run whose model refuses the key fails and says why; a running run stops when cancelled."""

import threading
import time

import pytest
from django.db import connection

from evaluation.models import EvalResponse, EvalRun
from evaluation.runs.services import run_cancel, run_create
from generation.models import GenerationJob
from tests.evaluation.runs import mc_items, open_items, release_of, run_here, second_endpoint
from tests.fake_llm import Reply


@pytest.mark.django_db
def test_a_model_with_a_wrong_key_fails_the_run_after_the_other_model_answered(project, endpoint, fake_llm):
    mc_items(project, 6)
    release = release_of(project)
    broken = second_endpoint(endpoint, name="broken", model="no-access")
    run = run_create(project=project, release=release, endpoints=[endpoint, broken], enqueue=False)
    fake_llm.responder = lambda received: (
        Reply.unauthorized() if received.body["model"] == "no-access" else Reply.json({"answer": "A"})
    )
    run_here(run)

    assert run.status == EvalRun.Status.FAILED
    assert "broken" in run.error and "401" in run.error
    answered = EvalResponse.objects.filter(run=run, endpoint=endpoint)
    assert answered.count() == release.items.filter(split="test").count()
    assert run.jobs.get(endpoint=broken).status == GenerationJob.Status.FAILED


@pytest.mark.django_db(transaction=True)
def test_a_running_run_stops_making_calls_when_cancelled(project, endpoint, fake_llm):
    open_items(project, 30)
    release = release_of(project, ratios=(0.1, 0.0, 0.9))
    endpoint.max_concurrency = 1
    endpoint.save()
    fake_llm.latency = 0.05
    run = run_create(
        project=project, release=release, endpoints=[endpoint], judge_endpoint=endpoint, enqueue=False
    )

    def work():
        try:
            run_here(run)
        finally:
            connection.close()

    thread = threading.Thread(target=work)
    thread.start()
    deadline = time.monotonic() + 30
    while len(fake_llm.requests) < 5 and time.monotonic() < deadline:
        time.sleep(0.05)
    run_cancel(run=EvalRun.objects.get(pk=run.pk))
    thread.join(timeout=60)

    run.refresh_from_db()
    assert run.status == EvalRun.Status.CANCELLED and not thread.is_alive()
    planned = 2 * release.items.filter(split="test").count()
    assert len(fake_llm.requests) < planned
    assert not run.jobs.filter(kind="judge_score").exists()  # the judge never started


@pytest.mark.django_db(transaction=True)
def test_the_models_of_a_run_answer_side_by_side(project, endpoint, fake_llm):
    mc_items(project, 30)
    release = release_of(project)
    tested = release.items.filter(split="test").count()
    other = second_endpoint(endpoint)
    for model in (endpoint, other):
        model.max_concurrency = 2
        model.save()
    fake_llm.latency = 0.1
    fake_llm.responder = lambda received: Reply.json({"answer": "A"})
    run = run_create(project=project, release=release, endpoints=[endpoint, other], enqueue=False)

    run_here(run)

    assert run.status == EvalRun.Status.SUCCEEDED, run.error
    spans = {
        model: [(r.started, r.finished) for r in fake_llm.requests if r.body["model"] == model]
        for model in (endpoint.model, other.model)
    }
    assert tested >= 10 and all(len(calls) == tested for calls in spans.values())
    first, second = spans.values()
    assert min(end for _, end in first) > min(start for start, _ in second), (
        "the second model waited for the first"
    )
    assert min(end for _, end in second) > min(start for start, _ in first)
