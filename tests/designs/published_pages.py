"""Uploading a design's published file on the import page: the page queues it as any import, the worker reads
it through the common import service, and the import's page reports what the design's reader did."""

from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from annotation.models import ImportBatch
from annotation.tasks import import_questions_task


def upload_and_import(client, project, filename: str, data: bytes) -> tuple[ImportBatch, str]:
    """Post the file, run what the worker runs, and return the batch and its page's text."""
    url = reverse("annotation:import_list", args=[project.slug])
    response = client.post(url, {"file": SimpleUploadedFile(filename, data)})
    assert response.status_code == 302, response.content.decode()[:500]
    batch = ImportBatch.objects.filter(project=project).latest("pk")
    assert response["Location"] == reverse("annotation:import_detail", args=[project.slug, batch.pk])
    import_questions_task(batch.pk)
    batch.refresh_from_db()
    return batch, client.get(response["Location"]).content.decode()


def upload_pairs_and_import(client, project, filename: str, data: bytes) -> tuple[ImportBatch, str]:
    """Post a pair file on ExpliCa's page, which queues it as any import; run what the worker runs, and return
    the batch and its page's text."""
    response = client.post(
        reverse("designs:explica_pairs", args=[project.slug]), {"file": SimpleUploadedFile(filename, data)}
    )
    assert response.status_code == 302, response.content.decode()[:500]
    batch = ImportBatch.objects.filter(project=project).latest("pk")
    assert response["Location"] == reverse("annotation:import_detail", args=[project.slug, batch.pk])
    import_questions_task(batch.pk)
    batch.refresh_from_db()
    return batch, client.get(response["Location"]).content.decode()
