"""Releases cut from the page or the API are built by a real Celery worker, with progress the page follows."""

import io
import zipfile

import httpx
import pytest
from django.http import FileResponse
from django.urls import reverse

from evaluation.models import Release
from tests.evaluation.helpers import approved_items
from tests.factories import api_token_key

pytestmark = pytest.mark.services


def test_a_release_cut_on_the_page_is_built_by_the_worker(
    celery_worker_process, project, client_for, curator
):
    approved_items(project, {"associational": 30, "counterfactual": 20}, groups_of=2)
    client = client_for(curator)
    response = client.post(
        reverse("evaluation:release_list", args=[project.slug]),
        {
            "seed": 5,
            "train": 0.8,
            "dev": 0.1,
            "test": 0.1,
            "license": "cc-by-4.0",
            "notes": "primeira versão",
        },
    )
    release = Release.objects.get()
    assert response.status_code == 302 and response["Location"].endswith(f"/releases/{release.version}/")

    detail = reverse("evaluation:release_detail", args=[project.slug, release.version])

    def finished():
        polled = client.get(detail, headers={"HX-Request": "true"})
        return polled if polled.status_code == 286 else None

    polled = celery_worker_process.wait_for(finished, timeout=60)
    assert "Ready" in polled.content.decode()
    release.refresh_from_db()
    assert release.status == Release.Status.READY and release.done == release.total == 50
    assert release.items.count() == 50 and "primeira versão" in release.card
    page = client.get(detail).content.decode()
    assert release.checksum in page and "download.zip" in page

    # Then the worker keeps the zip, and downloads send that file.
    download = reverse("evaluation:release_download", args=[project.slug, release.version])

    def kept():
        response = client.get(download)
        return response if isinstance(response, FileResponse) else None

    response = celery_worker_process.wait_for(kept, timeout=60)
    archive = zipfile.ZipFile(io.BytesIO(b"".join(response.streaming_content)))
    assert archive.namelist()[0] == f"{project.slug}-v1/README.md"
    assert archive.testzip() is None


def test_a_release_cut_through_the_api_is_built_by_the_worker(
    celery_worker_process, live_server, project, owner
):
    approved_items(project, {"interventional": 12})
    headers = {"Authorization": f"Token {api_token_key(owner)}"}
    response = httpx.post(
        f"{live_server.url}/api/v1/projects/{project.slug}/releases/",
        headers=headers,
        json={"seed": 9, "splits": {"train": 0.5, "dev": 0.25, "test": 0.25}},
        timeout=30,
    )
    assert response.status_code == 202 and response.json()["status"] == "queued"
    url = response.headers["Location"]

    def ready():
        body = httpx.get(url, headers=headers, timeout=30).json()
        return body if body["status"] == "ready" else None

    body = celery_worker_process.wait_for(ready, timeout=60)
    assert body["splits"] == {"train": 6, "dev": 3, "test": 3} and body["seed"] == 9


def test_a_build_whose_worker_died_is_started_again_from_nothing(transactional_db, project, tmp_path):
    """As a SIGKILLed worker leaves it: building, half the items frozen, no progress for long."""
    from datetime import timedelta

    from django.utils import timezone

    from evaluation.models import ReleaseItem
    from evaluation.services import release_create, release_cut
    from tests.workers import CeleryWorker

    items = approved_items(project, {"associational": 10, "counterfactual": 10})
    whole = release_cut(project=project, seed=3)  # the same cut, built in one go, for comparison
    release = release_create(project=project, seed=3)
    Release.objects.filter(pk=release.pk).update(
        status=Release.Status.BUILDING,
        stage="freezing",
        total=20,
        done=7,
        heartbeat_at=timezone.now() - timedelta(hours=1),
    )
    ReleaseItem.objects.bulk_create(
        ReleaseItem(release=release, item=item, split="train", position=n, data={"half": True})
        for n, item in enumerate(items[:7])
    )

    worker = CeleryWorker(log_path=tmp_path / "worker.log", extra_env={"RELEASE_STALE_SECONDS": "2"})
    worker.start()
    try:

        def ready():
            release.refresh_from_db()
            return release if release.status == Release.Status.READY else None

        worker.wait_for(ready, timeout=60)
    finally:
        worker.stop()
    assert release.resumed == 1 and release.items.count() == 20
    assert not release.items.filter(data__half=True).exists()
    assert release.checksum == whole.checksum  # same items, seed and ratios: the same release


def test_nothing_to_release_is_said_on_the_page(project, client_for, curator, db):
    response = client_for(curator).post(
        reverse("evaluation:release_list", args=[project.slug]),
        {"seed": 5, "train": 0.8, "dev": 0.1, "test": 0.1, "license": "cc-by-4.0"},
    )
    assert response.status_code == 200 and "no approved items" in response.content.decode()
    assert not Release.objects.exists()


@pytest.mark.parametrize(("who", "get", "post"), [("annotator", 200, 403), ("outsider", 404, 404)])
def test_annotators_see_releases_but_cannot_cut_them(request, project, client_for, db, who, get, post):
    client = client_for(request.getfixturevalue(who))
    url = reverse("evaluation:release_list", args=[project.slug])
    assert client.get(url).status_code == get
    assert (
        client.post(url, {"seed": 1, "train": 1, "dev": 0, "test": 0, "license": "mit"}).status_code == post
    )


@pytest.mark.parametrize("taken_at", ["freezing", "card"])
def test_a_build_taken_over_while_it_was_silent_stops_without_touching_the_new_builds_release(
    db, project, taken_at
):
    """A worker that was silent long enough for its build to be resumed elsewhere (one lifecycle,
    the claim checked on every heartbeat) finds at its next progress write that the release is no longer its
    own: it stops, and neither fails the release nor deletes its items nor marks it ready."""
    from evaluation.models import ReleaseItem
    from evaluation.services import release_build, release_create

    approved_items(project, {"associational": 10, "counterfactual": 10})
    release = release_create(project=project, seed=3)
    taken = []

    def on_progress(seen):
        if seen.stage == taken_at and not taken:
            # What releases_resume_stale and the next worker's claim leave: the release is another's.
            Release.objects.filter(pk=seen.pk).update(owner="another-host:1:resumed", resumed=1)
            taken.append(ReleaseItem.objects.filter(release=seen).count())

    built = release_build(release=release, on_progress=on_progress)
    assert taken, "the build reported its stage"
    assert (built.status, built.owner, built.error) == (Release.Status.BUILDING, "another-host:1:resumed", "")
    assert ReleaseItem.objects.filter(release=release).count() >= taken[0]  # nothing of the new build removed


@pytest.mark.parametrize("deleted_at", ["freezing", "checksum"])
def test_a_release_deleted_while_it_was_built_leaves_none_of_its_records(
    transactional_db, project, deleted_at
):
    """A record is tied to its release by Django's cascade, not by a database constraint (PostgreSQL checked
    that one record by record when the cut's COPY committed). A release deleted while it is built, before its
    records are written or after, the deletion taking the records it saw and the build committing more: the
    build stops without an error and none of the release's records is left. Outside any transaction, as a
    worker builds: the records stream through a second connection (PostgreSQL) or a writing thread (SQLite)."""
    from evaluation.models import ReleaseItem
    from evaluation.services import release_build, release_create

    approved_items(project, {"associational": 10, "counterfactual": 10})
    release = release_create(project=project, seed=3)
    deleted = []

    def on_progress(seen):
        if seen.stage == deleted_at and not deleted:
            deleted.append(ReleaseItem.objects.filter(release_id=seen.pk).count())
            Release.objects.filter(pk=seen.pk).delete()  # as the project's deletion does

    release_build(release=release, on_progress=on_progress)
    assert deleted == [0 if deleted_at == "freezing" else 20]
    assert not Release.objects.filter(pk=release.pk).exists()
    assert not ReleaseItem.objects.filter(release_id=release.pk).exists()
