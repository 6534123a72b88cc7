"""One lifecycle for background work (core.background): claims, heartbeats and the periodic sweep.

Imports share it with jobs, topic runs, releases and benchmark runs: an import whose worker died does not
stay "running" forever; the sweep queues it again (its writing is one transaction: nothing half-written), and
after a few deaths it fails with a reason the page shows, which ends the page's polling.
"""

import threading
import time
from datetime import timedelta

import pytest
from django.conf import settings
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connections
from django.urls import reverse
from django.utils import timezone

from annotation.importing import service as importing
from annotation.models import ImportBatch, Item
from annotation.tasks import import_questions_task
from core.background import import_stale_seconds, sweep_stale, work_claim, work_heartbeat

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
    return timezone.now() - timedelta(seconds=(seconds or import_stale_seconds()) + 60)


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
        "search indexing resumed",
        "generation jobs resumed",
        "topic runs failed",
        "release builds started again",
        "evaluation runs resumed",
        "results imports resumed or failed",
        "bulk actions failed",
    }


def test_a_failing_sweep_does_not_stop_the_others(monkeypatch, project, sent):
    from core import background

    def broken():
        raise RuntimeError("database hiccup")

    monkeypatch.setattr(background, "_SWEEPS", {"broken": broken, **background._SWEEPS})
    dead = batch(project, status=ImportBatch.Status.RUNNING, owner="gone", heartbeat_at=long_ago())

    sweep_stale()

    assert sent == [dead.pk]


def test_the_six_kinds_of_work_share_one_model_mixin_and_its_field_names():
    from annotation.models import BulkRun
    from core.background import BackgroundWork, WorkProgress
    from evaluation.models import EvalRun, Release
    from generation.models import GenerationJob
    from topics.models import TopicRun

    shared = {field.name for field in BackgroundWork._meta.get_fields()}
    assert {"status", "owner", "resumed", "error", "created_by", "created_at"} <= shared
    assert {"started_at", "heartbeat_at", "finished_at"} <= shared
    for model in (ImportBatch, GenerationJob, TopicRun, Release, EvalRun, BulkRun):
        assert issubclass(model, BackgroundWork), model
        assert shared <= {field.name for field in model._meta.get_fields()}, model
    for model in (GenerationJob, TopicRun, Release, BulkRun):
        assert issubclass(model, WorkProgress), model


def test_a_release_and_a_topic_run_are_claimed_for_an_owner(project):
    from evaluation.models import Release
    from topics.models import TopicRun
    from topics.run import topic_run_claim

    run = TopicRun.objects.create(project=project)
    assert topic_run_claim(run_id=run.pk) and not topic_run_claim(run_id=run.pk)
    run.refresh_from_db()
    assert run.owner and run.started_at and run.status == TopicRun.Status.RUNNING

    release = Release.objects.create(project=project, version=1, status=Release.Status.QUEUED)
    assert work_claim(Release, pk=release.pk, owner="builder", queued="queued", running="building")
    release.refresh_from_db()
    assert (release.owner, release.status) == ("builder", "building") and release.started_at


def test_an_import_whose_worker_died_is_retried_after_a_few_missed_heartbeats_not_a_quarter_hour(
    project, sent
):
    silent = batch(
        project,
        status=ImportBatch.Status.RUNNING,
        owner="gone",
        heartbeat_at=timezone.now() - timedelta(minutes=3),
    )
    beating = batch(
        project,
        status=ImportBatch.Status.RUNNING,
        owner="here",
        heartbeat_at=timezone.now() - timedelta(seconds=2 * settings.IMPORT_HEARTBEAT_SECONDS),
    )

    sweep_stale()

    silent.refresh_from_db()
    beating.refresh_from_db()
    assert silent.status == ImportBatch.Status.QUEUED, "three minutes without a heartbeat: its worker is gone"
    assert beating.status == ImportBatch.Status.RUNNING, "two heartbeats missed is not yet lost"
    assert sent == [silent.pk]
    assert import_stale_seconds() <= 120, "a few heartbeats: minutes at most"


@pytest.mark.django_db(transaction=True)
def test_a_live_import_keeps_beating_through_a_step_longer_than_the_stale_delay(
    project, sent, settings, monkeypatch
):
    """The heartbeat comes from a thread of its own: a step that gives the import no chance to beat (here the file
    takes 1.5 s to open, three times the stale delay) does not make the sweep take a live import."""
    settings.IMPORT_HEARTBEAT_SECONDS = 0.1
    settings.IMPORT_MISSED_HEARTBEATS = 5
    opening = threading.Event()
    open_table = importing.open_table

    def slow_open_table(*args, **kwargs):
        opening.set()
        time.sleep(1.5)
        return open_table(*args, **kwargs)

    monkeypatch.setattr(importing, "open_table", slow_open_table)
    rows = "question,causal_class\n" + "".join(
        f"Por que a chuva número {n} molha a rua da cidade?,associational\n" for n in range(20)
    )
    queued = importing.import_start(
        project=project, user=None, upload=SimpleUploadedFile("slow.csv", rows.encode()), skip_invalid=False
    )

    def work():
        try:
            import_questions_task(queued.pk)
        finally:
            connections.close_all()  # the thread's own

    worker = threading.Thread(target=work)
    worker.start()
    try:
        assert opening.wait(10), "the import never reached the file"
        time.sleep(1.0)  # twice the stale delay since the claim
        taken = importing.imports_resume_stale()
    finally:
        worker.join(30)
    queued.refresh_from_db()
    assert taken == [], "the sweep took an import whose worker was alive"
    assert (queued.status, queued.resumed) == (ImportBatch.Status.DONE, 0)
    assert Item.objects.filter(project=project).count() == 20
