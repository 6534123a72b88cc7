"""A topic run started from the page runs in a real Celery worker process, with live progress."""

import pytest
from django.urls import reverse

from tests.workers import CeleryWorker
from topics.models import Topic, TopicRun

from .topic_data import create_items, themed_questions

pytestmark = pytest.mark.services


@pytest.fixture
def worker(transactional_db, tmp_path, fake_llm):
    worker = CeleryWorker(
        log_path=tmp_path / "worker.log",
        concurrency=1,
        extra_env={
            "TOPIC_EMBEDDINGS": "endpoint",
            "EMBEDDING_MODEL": "fake-embedding",
            "EMBEDDING_BASE_URL": fake_llm.base_url,
        },
    )
    worker.start()
    yield worker
    worker.stop()


def test_a_topic_run_started_from_the_page_runs_in_the_worker_and_the_page_follows_it(
    worker, project, client_for, curator, fake_llm
):
    create_items(project, themed_questions(20))
    client = client_for(curator)

    response = client.post(
        reverse("topics:topic_run_start", args=[project.slug]),
        {"min_cluster_size": 6, "dimensions": 10, "duplicate_threshold": 0.95},
    )
    assert response.status_code == 302
    run = TopicRun.objects.get()

    worker.wait_for(lambda: TopicRun.objects.get(pk=run.pk).is_finished, timeout=90)
    run.refresh_from_db()
    assert run.status == TopicRun.Status.SUCCEEDED, run.error
    assert (run.done, run.n_topics) == (60, 3) and fake_llm.embedding_inputs == 60
    assert Topic.objects.filter(project=project, is_residual=False).count() == 3
    progress = client.get(
        reverse("topics:topic_run_progress", args=[project.slug, run.pk]), HTTP_HX_REQUEST="true"
    )
    assert progress.status_code == 286
