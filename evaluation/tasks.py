"""Celery tasks of the evaluation app: each takes ids, claims its row (in the service), and calls a service."""

import logging

from celery import shared_task

from generation.services import new_owner_token

from .models import Release
from .releases.archive import release_archive_keep
from .runs.services import run_claim, run_execute
from .services import release_build_and_keep

logger = logging.getLogger(__name__)


@shared_task(name="evaluation.build_release", acks_late=True, reject_on_worker_lost=True)
def release_build_task(release_id: int) -> dict:
    """Build the release and keep its zip. Delivered again once it is ready (its worker died keeping the zip),
    it keeps the zip if there is none."""
    release = Release.objects.select_related("project").get(pk=release_id)
    if release.status != Release.Status.QUEUED:
        release_archive_keep(release=release, only_if_missing=True)
        return {"skipped": f"release is {release.status}"}
    release = release_build_and_keep(release=release)
    logger.info("release %s built: %s items, %s", release, release.total, release.checksum)
    return {"status": release.status, "version": release.version, "checksum": release.checksum}


@shared_task(name="evaluation.run_eval", acks_late=True, reject_on_worker_lost=True)
def run_eval_task(run_id: int) -> dict:
    """Claim the run (a duplicate delivery finds it taken and does nothing) and take it to the end."""
    owner = new_owner_token()
    if not run_claim(run_id=run_id, owner=owner):
        return {"run": run_id, "skipped": "already running, finished or cancelled"}
    # The run's other jobs go to the queue: other worker processes run them on other cores.
    return run_execute(run_id=run_id, owner=owner, hand_off=True)


@shared_task(name="evaluation.import_run_results")
def import_run_results_task(import_id: int) -> dict:
    """Import results from elsewhere into a new run; the service claims the import (a duplicate delivery does
    nothing)."""
    from .runs.results_import import results_import_execute

    results_import = results_import_execute(import_id=import_id, owner=new_owner_token())
    if results_import is None:
        return {"skipped": "already taken or finished"}
    return {"status": results_import.status, "run": results_import.run_id}
