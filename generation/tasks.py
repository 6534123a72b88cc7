"""Celery tasks of the generation app (stale jobs are resumed by the periodic sweep: core.background)."""

import logging

from celery import shared_task

from .services import job_claim, job_run, new_owner_token

logger = logging.getLogger(__name__)


@shared_task(name="generation.run_job", acks_late=True, reject_on_worker_lost=True)
def run_generation_job(job_id: int) -> dict:
    """Claim the job (a duplicate delivery finds it taken and does nothing) and run it to the end."""
    owner = new_owner_token()
    if not job_claim(job_id=job_id, owner=owner):
        return {"job": job_id, "skipped": "already running, finished or cancelled"}
    return job_run(job_id=job_id, owner=owner)
