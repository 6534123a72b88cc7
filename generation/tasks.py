"""Celery tasks of the generation app, and the watch that resumes jobs whose worker died."""

import logging
import threading

from celery import shared_task
from celery.signals import worker_ready
from django.conf import settings
from django.db import close_old_connections

from .services import job_claim, job_run, jobs_resume_stale, new_owner_token

logger = logging.getLogger(__name__)


@shared_task(name="generation.run_job", acks_late=True, reject_on_worker_lost=True)
def run_generation_job(job_id: int) -> dict:
    """Claim the job (a duplicate delivery finds it taken and does nothing) and run it to the end."""
    owner = new_owner_token()
    if not job_claim(job_id=job_id, owner=owner):
        return {"job": job_id, "skipped": "already running, finished or cancelled"}
    return job_run(job_id=job_id, owner=owner)


def _watch_for_stale_jobs(stop: threading.Event) -> None:
    interval = max(0.2, settings.GENERATION_HEARTBEAT_SECONDS)
    while not stop.is_set():
        try:
            resumed = jobs_resume_stale()
            if resumed:
                logger.warning("resumed generation jobs %s", resumed)
        except Exception:  # noqa: BLE001 - the watch must outlive a database hiccup
            logger.exception("looking for stale generation jobs failed")
        finally:
            close_old_connections()
        stop.wait(interval)


_watch_stop = threading.Event()


@worker_ready.connect
def start_watching_for_stale_jobs(sender=None, **kwargs) -> None:
    """Each worker looks for jobs whose worker stopped beating, and queues them again."""
    threading.Thread(target=_watch_for_stale_jobs, args=(_watch_stop,), name="stale-job-watch", daemon=True).start()
