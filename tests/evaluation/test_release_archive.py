"""A release's zip is made once and kept: downloads send the kept file, which holds byte for byte what they
would stream, and stream whenever the zip would differ (some formats only, a project renamed since)."""

import io
import logging
import zipfile

import pytest
from django.core.management import call_command
from django.http import FileResponse
from django.urls import reverse

from annotation.models import Project
from evaluation.models import Release
from evaluation.releases import archive
from evaluation.releases.archive import archive_folder, release_archive_store, stored_archive
from evaluation.services import release_create, release_cut
from evaluation.tasks import release_build_task
from tests.evaluation.helpers import approved_items

pytestmark = pytest.mark.django_db


@pytest.fixture
def release(project):
    approved_items(
        project,
        {"associational": 12, "interventional": 6, "counterfactual": 6},
        groups_of=2,
        answer_by_model_every=3,
    )
    return release_cut(project=project)


def download(client, release, query: str = ""):
    url = reverse("evaluation:release_download", args=[release.project.slug, release.version])
    response = client.get(url + query)
    assert response.status_code == 200, response.status_code
    return response, b"".join(response.streaming_content)


def entries(data: bytes) -> list[tuple[str, bytes]]:
    """The zip's files in their order, each with its bytes (the zips' own timestamps aside)."""
    opened = zipfile.ZipFile(io.BytesIO(data))
    assert opened.testzip() is None, "a damaged entry"
    return [(name, opened.read(name)) for name in opened.namelist()]


def test_a_download_sends_the_kept_zip_which_holds_what_the_stream_holds(release, client_for, annotator):
    client = client_for(annotator)
    streamed, streamed_bytes = download(client, release)
    assert not isinstance(streamed, FileResponse), "nothing kept yet: streamed"

    path = release_archive_store(release=release)
    kept, kept_bytes = download(client, release)
    assert isinstance(kept, FileResponse)
    assert kept_bytes == path.read_bytes()
    assert kept["Content-Disposition"] == 'attachment; filename="causal-qa-v1.zip"'
    assert kept["Content-Type"] == "application/zip"
    assert kept["Content-Length"] == str(len(kept_bytes))
    assert entries(kept_bytes) == entries(streamed_bytes)
    assert [entry.name for entry in archive_folder(release.pk).iterdir()] == [path.name], (
        "no part left behind"
    )


def test_a_download_of_some_formats_streams_them(release, client_for, annotator):
    release_archive_store(release=release)
    response, data = download(client_for(annotator), release, "?format=jsonl")
    assert not isinstance(response, FileResponse)
    names = [name for name, _ in entries(data)]
    assert "causal-qa-v1/data/train.jsonl" in names
    assert not any(name.endswith((".csv", ".parquet")) for name in names)


def test_after_a_rename_downloads_stream_the_new_card_until_the_command_keeps_it(
    release, client_for, annotator
):
    client = client_for(annotator)
    before = release_archive_store(release=release)
    Project.objects.filter(pk=release.project_id).update(name="Perguntas causais — edição revista")

    response, streamed = download(client, release)
    assert not isinstance(response, FileResponse), "the kept zip has the old name in its card"
    readme = dict(entries(streamed))["causal-qa-v1/README.md"].decode()
    assert "# Perguntas causais — edição revista — v1" in readme

    out = io.StringIO()
    call_command("release_archive", release.project.slug, stdout=out)
    assert out.getvalue().startswith("v1: ")
    response, kept = download(client, release)
    assert isinstance(response, FileResponse)
    assert entries(kept) == entries(streamed)
    assert not before.exists(), "the zip with the old card is gone"

    out = io.StringIO()
    call_command("release_archive", release.project.slug, "v1", stdout=out)
    assert out.getvalue().startswith("v1: kept already")


def test_a_deleted_project_takes_its_releases_zips_along(release, django_capture_on_commit_callbacks):
    path = release_archive_store(release=release)
    with django_capture_on_commit_callbacks(execute=True):
        release.project.delete()
    assert not path.exists()
    assert not archive_folder(release.pk).exists()


def test_a_zip_that_cannot_be_written_whole_leaves_nothing_and_downloads_stream(
    release, client_for, annotator, monkeypatch
):
    def disk_full(*args, **kwargs):
        yield b"PK\x03\x04"
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(archive, "zip_stream", disk_full)
    with pytest.raises(OSError, match="No space left"):
        release_archive_store(release=release)
    assert list(archive_folder(release.pk).iterdir()) == [], "no part left behind"
    monkeypatch.undo()
    assert stored_archive(release) is None
    response, data = download(client_for(annotator), release)
    assert not isinstance(response, FileResponse)
    assert entries(data)[0][0] == "causal-qa-v1/README.md"


def test_the_cut_task_keeps_the_zip_and_a_release_whose_zip_cannot_be_kept_stays_ready(
    project, monkeypatch, caplog
):
    approved_items(project, {"associational": 4, "counterfactual": 4})
    first = release_create(project=project)
    assert release_build_task(first.pk)["status"] == Release.Status.READY
    first.refresh_from_db()
    kept = stored_archive(first)
    assert kept is not None, "the worker keeps the zip after the cut"
    kept.close()

    def disk_full(*, release, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("evaluation.releases.archive.release_archive_store", disk_full)
    second = release_create(project=project)
    with caplog.at_level(logging.ERROR, logger="evaluation.releases.archive"):
        assert release_build_task(second.pk)["status"] == Release.Status.READY
    second.refresh_from_db()
    assert second.is_ready
    assert stored_archive(second) is None
    assert "could not be kept" in caplog.text

    monkeypatch.undo()  # the task delivered again (its worker died keeping the zip) keeps it
    assert release_build_task(second.pk) == {"skipped": "release is ready"}
    kept = stored_archive(second)
    assert kept is not None
    kept.close()


def test_the_release_command_keeps_the_zip_it_cut(project):
    approved_items(project, {"interventional": 6})
    call_command("release", project.slug, stdout=io.StringIO(), stderr=io.StringIO(), verbosity=0)
    release = Release.objects.get(project=project)
    kept = stored_archive(release)
    assert kept is not None
    kept.close()


def test_a_release_the_command_cut_whose_zip_cannot_be_kept_stays_ready(project, monkeypatch, caplog):
    """The command keeps the zip through the same service as the worker's task, and fails no more than it."""

    def disk_full(*, release, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("evaluation.releases.archive.release_archive_store", disk_full)
    approved_items(project, {"interventional": 6})
    with caplog.at_level(logging.ERROR, logger="evaluation.releases.archive"):
        call_command("release", project.slug, stdout=io.StringIO(), stderr=io.StringIO(), verbosity=0)
    release = Release.objects.get(project=project)
    assert release.is_ready
    assert stored_archive(release) is None
    assert "could not be kept" in caplog.text
