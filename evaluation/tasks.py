"""Celery tasks of the evaluation app: each takes ids, claims its row (in the service), and calls a service."""

import logging

from celery import shared_task

from generation.services import new_owner_token

from .models import Release
from .releases.archive import kept_archive, release_archive_store
from .runs.services import run_claim, run_execute
from .services import release_build

logger = logging.getLogger(__name__)


@shared_task(name="evaluation.build_release", acks_late=True, reject_on_worker_lost=True)
def release_build_task(release_id: int) -> dict:
    """Build the release, then keep its zip. Delivered again once it is ready (its worker died keeping the zip),
    it keeps the zip if there is none."""
    release = Release.objects.select_related("project").get(pk=release_id)
    if release.is_ready:
        _keep_zip(release, only_if_missing=True)
    if release.status != Release.Status.QUEUED:
        return {"skipped": f"release is {release.status}"}
    release = release_build(release=release)
    logger.info("release %s built: %s items, %s", release, release.total, release.checksum)
    if release.is_ready:
        _keep_zip(release)
    return {"status": release.status, "version": release.version, "checksum": release.checksum}


def _keep_zip(release: Release, only_if_missing: bool = False) -> None:
    """Downloads stream the release until its zip is kept; one that cannot be kept (a full disk) leaves them
    streaming."""
    if only_if_missing and kept_archive(release):
        return
    try:
        release_archive_store(release=release)
    except Exception:
        logger.exception("the zip of release %s could not be kept; downloads stream it", release)


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
