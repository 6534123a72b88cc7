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


@shared_task(name="generation.run_topic_model", acks_late=True, reject_on_worker_lost=True)
def run_topic_model(run_id: int) -> dict:
    """Claim the topic run (a duplicate delivery finds it taken) and do it to the end."""
    from .topics.run import topic_run_claim, topic_run_execute

    if not topic_run_claim(run_id=run_id):
        return {"run": run_id, "skipped": "already running or finished"}
    run = topic_run_execute(run_id=run_id)
    return {
        "run": run_id,
        "status": run.status,
        "topics": run.n_topics,
        "embedded": run.done,
        "reused": run.reused,
    }
