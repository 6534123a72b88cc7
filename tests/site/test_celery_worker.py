"""Tasks travel through the real broker (Redis in CI) to a separately started worker process."""

import pytest
from django.conf import settings
from django.core.files.base import ContentFile

from annotation.models import ImportBatch
from annotation.tasks import import_questions_task
from causalqa_site.celery import ping

pytestmark = pytest.mark.services


def test_ci_uses_redis_and_postgresql_when_they_are_configured():
    import os

    if os.environ.get("REDIS_URL"):
        assert settings.CELERY_BROKER_URL.startswith("redis://")
    if os.environ.get("DATABASE_URL", "").startswith("postgres"):
        from django.db import connection

        assert connection.vendor == "postgresql"


def test_a_task_result_comes_back_from_the_worker_process(celery_worker_process):
    result = ping.apply_async(args=["olá"], queue=celery_worker_process.queue)
    assert result.get(timeout=30) == "olá"


def test_the_worker_imports_a_committed_upload(celery_worker_process, project):
    batch = ImportBatch.objects.create(project=project, filename="q.csv")
    batch.source_file.save(
        "q.csv",
        ContentFile(
            "question,causal_class\n"
            "Por que o desemprego sobe na crise?,associativa\n"
            '"Se eu estudar à noite, passo no concurso?",intervencional\n'.encode()
        ),
    )

    result = import_questions_task.delay(batch.pk)

    outcome = result.get(timeout=60)
    assert outcome["status"] == "done"
    assert outcome["funnel"]["imported"] == 2
    batch.refresh_from_db()
    assert batch.status == ImportBatch.Status.DONE
    assert set(project.items.values_list("causal_class", flat=True)) == {"associational", "interventional"}
