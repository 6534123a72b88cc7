"""Runs in a real Celery worker process: started through the API and followed to the report; a worker killed
mid-run and started again finishes the run without paying for any recorded call twice."""

import re
from collections import Counter

import httpx
import pytest
from django.conf import settings

from evaluation.models import EvalResponse, EvalRun
from evaluation.runs.services import run_create
from generation.models import LLMCall
from tests.evaluation.runs import asked, mc_items, open_items, release_of, second_endpoint
from tests.factories import api_token_key
from tests.fake_llm import Reply
from tests.workers import QUICK_JOB_SETTINGS, CeleryWorker

pytestmark = pytest.mark.services


def test_a_run_started_through_the_api_is_run_by_the_worker_with_its_judge(
    worker, live_server, project, curator, endpoint, fake_llm
):
    open_items(project, 6)
    release_of(project)
    headers = {"Authorization": f"Token {api_token_key(curator)}"}
    response = httpx.post(
        f"{live_server.url}/api/v1/projects/{project.slug}/runs/",
        headers=headers,
        timeout=30,
        json={"release": "v1", "models": ["fake"], "judge": "fake"},
    )
    assert response.status_code == 202, response.text
    url = response.headers["Location"]

    def finished():
        body = httpx.get(url, headers=headers, timeout=30).json()
        return body if body["status"] in ("succeeded", "failed", "cancelled") else None

    body = worker.wait_for(finished, timeout=180)
    assert body["status"] == "succeeded", body["error"]
    keys = {table["key"] for table in body["tables"]}
    assert {"judge_scores", "reference_scores", "rankings", "position_bias"} <= keys
    assert "bertscore" in keys or "BERTScore not computed" in body["notes"]
    assert body["progress"]["failed"] == 0 and float(body["progress"]["cost"]) > 0


def test_a_worker_killed_mid_run_and_started_again_finishes_it_and_pays_nothing_twice(
    worker, project, endpoint, fake_llm
):
    mc_items(project, 60)
    release = release_of(project, ratios=(0.2, 0.0, 0.8))
    fake_llm.latency = 0.1
    endpoint.max_concurrency = 3
    endpoint.save()
    fake_llm.responder = lambda received: Reply.json({"answer": "B"})
    run = run_create(project=project, release=release, endpoints=[endpoint], conditions=["zero-shot"])
    n_items = release.items.filter(split="test").count()
    answered = EvalResponse.objects.filter(run=run)
    worker.wait_for(lambda: answered.count() >= 12, timeout=60)

    worker.kill()
    recorded = set(answered.values_list("release_item__data__question", flat=True))
    assert 12 <= len(recorded) < n_items and EvalRun.objects.get(pk=run.pk).status == EvalRun.Status.RUNNING
    worker.start()

    worker.wait_for(lambda: EvalRun.objects.get(pk=run.pk).is_finished, timeout=120)
    run.refresh_from_db()
    assert run.status == EvalRun.Status.SUCCEEDED, run.error
    assert answered.count() == n_items and LLMCall.objects.filter(job__in=run.jobs.all()).count() == n_items
    asked_count = Counter(asked(received) for received in fake_llm.requests)
    assert all(asked_count[question] == 1 for question in recorded)
    repeated = sum(count - 1 for count in asked_count.values())
    assert repeated <= 2 * endpoint.max_concurrency and len(fake_llm.requests) == n_items + repeated
    assert run.jobs.get().resumed + run.resumed >= 1


@pytest.mark.skipif(
    not settings.REDIS_URL,
    reason="a run hands its jobs to other worker processes only with Redis (shared limits)",
)
def test_the_models_of_a_run_answer_in_worker_processes_of_their_own(
    transactional_db, tmp_path, api_key, project, endpoint, fake_llm
):
    """With a prefork pool the run's task answers with the first model and hands the other to the queue: another
    process (another core) runs it, each result recorded once."""
    worker = CeleryWorker(
        log_path=tmp_path / "worker.log", pool="prefork", concurrency=3, extra_env=QUICK_JOB_SETTINGS
    )
    worker.start()
    try:
        mc_items(project, 30)
        release = release_of(project)
        tested = release.items.filter(split="test").count()
        other = second_endpoint(endpoint)
        fake_llm.latency = 0.05
        fake_llm.responder = lambda received: Reply.json({"answer": "A"})
        run = run_create(project=project, release=release, endpoints=[endpoint, other])
        worker.wait_for(lambda: EvalRun.objects.get(pk=run.pk).is_finished, timeout=120)
    finally:
        worker.stop()
    run.refresh_from_db()
    assert run.status == EvalRun.Status.SUCCEEDED, run.error
    processes = {job.owner.split(":")[1] for job in run.jobs.all()}
    assert len(processes) == 2, "both models answered in the same process"
    assert EvalResponse.objects.filter(run=run).count() == 2 * tested == len(fake_llm.requests)
