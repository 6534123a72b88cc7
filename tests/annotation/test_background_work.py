"""One lifecycle for background work (core.background): claims, heartbeats and the periodic sweep.

Imports share it with jobs, topic runs, releases and benchmark runs: an import whose worker died no longer
stays "running" forever; the sweep queues it again (its writing is one transaction: nothing half-written), and
after a few deaths it fails with a reason the page shows, which ends the page's polling.
"""

from datetime import timedelta

import pytest
from django.conf import settings
from django.urls import reverse
from django.utils import timezone

from annotation.importing import service as importing
from annotation.models import ImportBatch
from core.background import sweep_stale, work_claim, work_heartbeat

pytestmark = pytest.mark.django_db


@pytest.fixture
def sent(monkeypatch):
    """The imports handed to the queue (no broker in these tests)."""
    queued = []
    monkeypatch.setattr(importing, "import_enqueue", queued.append)
    return queued


def batch(project, **fields) -> ImportBatch:
    return ImportBatch.objects.create(project=project, filename="perguntas.csv", **fields)


def long_ago(seconds=None):
    return timezone.now() - timedelta(seconds=(seconds or settings.IMPORT_STALE_SECONDS) + 60)


def test_a_queued_import_is_claimed_once_and_only_its_owner_beats(project):
    queued = batch(project)
    assert work_claim(ImportBatch, pk=queued.pk, owner="a", queued="queued", running="running")
    assert not work_claim(ImportBatch, pk=queued.pk, owner="b", queued="queued", running="running")
    assert work_heartbeat(ImportBatch, pk=queued.pk, owner="a", running="running")
    assert not work_heartbeat(ImportBatch, pk=queued.pk, owner="b", running="running")
    queued.refresh_from_db()
    assert (queued.status, queued.owner, queued.started_at is not None) == ("running", "a", True)


def test_an_import_whose_worker_died_is_queued_again_by_the_sweep(project, sent):
    dead = batch(project, status=ImportBatch.Status.RUNNING, owner="gone", heartbeat_at=long_ago())
    alive = batch(project, status=ImportBatch.Status.RUNNING, owner="here", heartbeat_at=timezone.now())

    acted = sweep_stale()

    dead.refresh_from_db()
    alive.refresh_from_db()
    assert (dead.status, dead.owner, dead.resumed) == (ImportBatch.Status.QUEUED, "", 1)
    assert alive.status == ImportBatch.Status.RUNNING
    assert sent == [dead.pk] and acted["imports resumed or failed"] == [dead.pk]


def test_an_import_that_keeps_killing_its_worker_fails_with_a_reason_and_the_page_stops_polling(
    project, sent, client_for, curator
):
    doomed = batch(
        project,
        status=ImportBatch.Status.RUNNING,
        owner="gone",
        heartbeat_at=long_ago(),
        resumed=importing.MAX_RESUMES,
    )

    sweep_stale()

    doomed.refresh_from_db()
    assert doomed.status == ImportBatch.Status.FAILED and doomed.finished_at is not None and sent == []
    assert "worker died" in doomed.errors[0]["reason"]
    response = client_for(curator).get(
        reverse("annotation:import_detail", args=[project.slug, doomed.pk]), HTTP_HX_REQUEST="true"
    )
    assert response.status_code == 286 and "worker died" in response.content.decode()


def test_a_queued_import_nobody_picked_up_is_sent_again(project, sent):
    forgotten = batch(project, heartbeat_at=long_ago(settings.GENERATION_QUEUED_STALE_SECONDS))
    fresh = batch(project, heartbeat_at=timezone.now())

    sweep_stale()

    assert sent == [forgotten.pk] and fresh.pk not in sent


def test_the_sweep_is_one_periodic_task_of_celery_beat_covering_every_kind_of_work():
    from causalqa_site.celery import app
    from core.background import _SWEEPS

    schedule = settings.CELERY_BEAT_SCHEDULE["sweep-stale-work"]
    assert schedule["task"] == "causalqa.sweep_stale" and schedule["task"] in app.tasks
    assert set(_SWEEPS) == {
        "imports resumed or failed",
        "generation jobs resumed",
        "topic runs failed",
        "release builds started again",
        "evaluation runs resumed",
    }


def test_a_failing_sweep_does_not_stop_the_others(monkeypatch, project, sent):
    from core import background

    def broken():
        raise RuntimeError("database hiccup")

    monkeypatch.setattr(background, "_SWEEPS", {"broken": broken, **background._SWEEPS})
    dead = batch(project, status=ImportBatch.Status.RUNNING, owner="gone", heartbeat_at=long_ago())

    sweep_stale()

    assert sent == [dead.pk]


def test_the_five_kinds_of_work_share_one_model_mixin_and_its_field_names():
    from core.background import BackgroundWork, WorkProgress
    from evaluation.models import EvalRun, Release
    from generation.models import GenerationJob, TopicRun

    shared = {field.name for field in BackgroundWork._meta.get_fields()}
    assert {"status", "owner", "resumed", "error", "created_by", "created_at"} <= shared
    assert {"started_at", "heartbeat_at", "finished_at"} <= shared
    for model in (ImportBatch, GenerationJob, TopicRun, Release, EvalRun):
        assert issubclass(model, BackgroundWork), model
        assert shared <= {field.name for field in model._meta.get_fields()}, model
    for model in (GenerationJob, TopicRun, Release):
        assert issubclass(model, WorkProgress), model


def test_a_release_and_a_topic_run_are_claimed_for_an_owner(project):
    from evaluation.models import Release
    from generation.models import TopicRun
    from generation.topics.run import topic_run_claim

    run = TopicRun.objects.create(project=project)
    assert topic_run_claim(run_id=run.pk) and not topic_run_claim(run_id=run.pk)
    run.refresh_from_db()
    assert run.owner and run.started_at and run.status == TopicRun.Status.RUNNING

    release = Release.objects.create(project=project, version=1, status=Release.Status.QUEUED)
    assert work_claim(Release, pk=release.pk, owner="builder", queued="queued", running="building")
    release.refresh_from_db()
    assert (release.owner, release.status) == ("builder", "building") and release.started_at


@pytest.mark.django_db(transaction=True)
def test_the_migration_to_the_shared_fields_keeps_each_release_s_progress():
    from django.db import connection
    from django.db.migrations.executor import MigrationExecutor

    before, after = (
        [("evaluation", "0010_model_names_for_people")],
        [("evaluation", "0011_background_work_fields")],
    )
    executor = MigrationExecutor(connection)
    latest = executor.loader.graph.leaf_nodes()
    executor.migrate(before)
    try:
        old = executor.loader.project_state(before).apps
        from annotation.models import Project  # annotation's tables are as they are now

        project = Project.objects.create(name="Old", slug="old")
        old.get_model("evaluation", "Release").objects.create(
            project_id=project.pk, version=1, status="building", items_total=20, items_done=7
        )
        executor = MigrationExecutor(connection)
        executor.migrate(after)
        new = executor.loader.project_state(after).apps
        release = new.get_model("evaluation", "Release").objects.get()
        assert (release.total, release.done, release.owner) == (20, 7, "")
    finally:
        # The tests after this one run on the database as the latest migrations leave it (a frozen record's
        # column is text since evaluation 0013, and a binary COPY depends on it).
        MigrationExecutor(connection).migrate(latest)
