"""Jobs in real Celery worker processes: a whole job, a worker killed mid-job, limits shared by workers."""

import os
import re
from collections import Counter

import pytest

from annotation.models import Item, Revision
from generation.models import GenerationJob, LLMCall
from generation.services import job_create
from generation.tasks import run_generation_job
from tests.factories import ItemFactory
from tests.workers import QUICK_JOB_SETTINGS, CeleryWorker

pytestmark = pytest.mark.services
QUICK = QUICK_JOB_SETTINGS


@pytest.fixture
def worker(transactional_db, tmp_path, api_key):
    worker = CeleryWorker(log_path=tmp_path / "worker.log", extra_env=QUICK)
    worker.start()
    yield worker
    worker.stop()


def waiting_items(project, n):
    return [
        ItemFactory(project=project, reference_answer="", answer_by="", status=Item.Status.PENDING, round=0)
        for _ in range(n)
    ]


def asked_question(received) -> str:
    return re.search(r"Pergunta: (.*)", received.messages[-1]["content"]).group(1).strip()


def test_a_job_started_from_a_service_runs_in_the_worker_to_the_end(
    worker, project, endpoint, fake_llm, curator
):
    items = waiting_items(project, 12)

    job = job_create(
        project=project, kind="answer", endpoint=endpoint, item_ids=[i.pk for i in items], user=curator
    )

    worker.wait_for(lambda: GenerationJob.objects.get(pk=job.pk).is_finished, timeout=60)
    job.refresh_from_db()
    assert job.status == GenerationJob.Status.SUCCEEDED, job.error
    assert (job.done, job.total) == (12, 12) and job.started_at and job.finished_at
    assert Item.objects.filter(pk__in=[i.pk for i in items], status=Item.Status.IN_REVIEW).count() == 12


def test_a_worker_killed_mid_job_and_started_again_finishes_it_once_and_pays_nothing_twice(
    worker, project, endpoint, fake_llm
):
    items = waiting_items(project, 60)
    fake_llm.latency = 0.1
    endpoint.max_concurrency = 3
    endpoint.save()
    job = job_create(project=project, kind="answer", endpoint=endpoint, item_ids=[i.pk for i in items])
    succeeded = LLMCall.objects.filter(job=job, status=LLMCall.Status.SUCCEEDED)
    worker.wait_for(lambda: succeeded.count() >= 15, timeout=60)

    worker.kill()
    recorded = set(succeeded.values_list("item__question", flat=True))
    asked_before_kill = len(fake_llm.requests)
    assert (
        15 <= len(recorded) < 60
        and GenerationJob.objects.get(pk=job.pk).status == GenerationJob.Status.RUNNING
    )
    worker.start()

    worker.wait_for(lambda: GenerationJob.objects.get(pk=job.pk).is_finished, timeout=90)
    job.refresh_from_db()
    assert job.status == GenerationJob.Status.SUCCEEDED, job.error
    assert job.resumed >= 1 and (job.done, job.failed, job.total) == (60, 0, 60)
    # every item produced exactly once
    model_revisions = Counter(
        Revision.objects.filter(item__in=items, kind=Revision.Kind.MODEL).values_list("item_id", flat=True)
    )
    assert sorted(model_revisions.values()) == [1] * 60
    assert LLMCall.objects.filter(job=job).count() == 60
    # Nothing already recorded was asked for again. Made again: only the calls under way at the kill
    # and results not yet recorded, at most the endpoint's concurrency of each (the lane's budget).
    asked = Counter(asked_question(received) for received in fake_llm.requests)
    assert all(asked[question] == 1 for question in recorded)
    repeated = sum(count - 1 for count in asked.values())
    assert repeated <= 2 * endpoint.max_concurrency
    assert asked_before_kill < len(fake_llm.requests) == 60 + repeated
    # what was paid is what the job counts
    assert job.tokens_in == sum(LLMCall.objects.filter(job=job).values_list("tokens_in", flat=True))


@pytest.mark.skipif(
    not os.environ.get("REDIS_URL"), reason="limits shared by worker processes need REDIS_URL"
)
def test_two_workers_together_respect_the_endpoints_concurrency_limit(
    transactional_db, tmp_path, project, endpoint, fake_llm
):
    fake_llm.latency = 0.2
    endpoint.max_concurrency = 2
    endpoint.save()
    workers = [CeleryWorker(log_path=tmp_path / f"worker{n}.log", extra_env=QUICK) for n in (1, 2)]
    try:
        for worker in workers:
            worker.start()
        jobs = []
        for worker in workers:
            job = job_create(
                project=project,
                kind="answer",
                endpoint=endpoint,
                item_ids=[i.pk for i in waiting_items(project, 10)],
                enqueue=False,
            )
            run_generation_job.apply_async(args=[job.pk], queue=worker.queue)
            jobs.append(job)

        workers[0].wait_for(
            lambda: all(GenerationJob.objects.get(pk=j.pk).is_finished for j in jobs), timeout=90
        )
    finally:
        for worker in reversed(workers):
            worker.stop()
    assert [GenerationJob.objects.get(pk=j.pk).status for j in jobs] == ["succeeded", "succeeded"]
    assert len(fake_llm.requests) == 20
    assert fake_llm.max_seen_concurrency == 2
    owners = {GenerationJob.objects.get(pk=j.pk).owner.split(":")[1] for j in jobs}
    assert len(owners) == 2  # two processes really ran them


def test_the_generate_command_hands_the_job_to_a_worker_and_follows_it(
    worker, project, endpoint, fake_llm, capsys
):
    from django.core.management import call_command

    waiting_items(project, 5)

    call_command("generate", "answers", "--project", project.slug, "--all-waiting")

    captured = capsys.readouterr()
    assert "succeeded: 5 done, 0 failed" in captured.out
    assert "5/5" in captured.err  # the progress bar reached the end
