"""An import that ends in an internal error, or is given up on after its workers died, leaves no upload on disk:
nothing would ever retry it, and the files piled up under their own names."""

from datetime import timedelta
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.utils import timezone

from annotation.importing import service
from annotation.importing.service import MAX_RESUMES, import_start, imports_resume_stale
from annotation.models import ImportBatch
from annotation.tasks import import_questions_task

pytestmark = pytest.mark.django_db


def queued_import(project, user, django_capture_on_commit_callbacks) -> ImportBatch:
    upload = SimpleUploadedFile("perguntas.csv", b"question\nPor que a chuva molha a rua?\n")
    with django_capture_on_commit_callbacks(execute=False):
        batch = import_start(project=project, user=user, upload=upload)
    assert Path(batch.source_file.path).exists()
    return batch


def test_an_import_failing_with_an_internal_error_deletes_its_upload(
    project, curator, monkeypatch, django_capture_on_commit_callbacks
):
    batch = queued_import(project, curator, django_capture_on_commit_callbacks)
    stored = Path(batch.source_file.path)

    def broken(**kwargs):
        raise RuntimeError("the disk is full")

    monkeypatch.setattr("annotation.tasks.questions_import", broken)
    with pytest.raises(RuntimeError):
        import_questions_task(batch.pk)
    batch.refresh_from_db()
    assert batch.status == ImportBatch.Status.FAILED
    assert "internal error" in batch.errors[0]["reason"]
    assert not stored.exists()
    assert not batch.source_file


def test_an_import_given_up_on_after_its_workers_died_deletes_its_upload(
    project, curator, monkeypatch, django_capture_on_commit_callbacks
):
    batch = queued_import(project, curator, django_capture_on_commit_callbacks)
    stored = Path(batch.source_file.path)
    long_ago = timezone.now() - timedelta(days=1)
    ImportBatch.objects.filter(pk=batch.pk).update(
        status=ImportBatch.Status.RUNNING, resumed=MAX_RESUMES, heartbeat_at=long_ago
    )
    monkeypatch.setattr(service, "import_enqueue", lambda batch_id: None)
    assert batch.pk in imports_resume_stale()
    batch.refresh_from_db()
    assert batch.status == ImportBatch.Status.FAILED
    assert not stored.exists()
