"""Celery tasks of the evaluation app: each takes ids, claims its row (in the service), and calls a service."""

import logging

from celery import shared_task

from .models import Release
from .services import release_build

logger = logging.getLogger(__name__)


@shared_task(name="evaluation.build_release")
def release_build_task(release_id: int) -> dict:
    release = Release.objects.select_related("project").get(pk=release_id)
    if release.status != Release.Status.QUEUED:
        return {"skipped": f"release is {release.status}"}
    release = release_build(release=release)
    logger.info("release %s built: %s items, %s", release, release.items_total, release.checksum)
    return {"status": release.status, "version": release.version, "checksum": release.checksum}
