"""Celery tasks of the topics app (stale runs are failed by the periodic sweep: core.background)."""

from celery import shared_task

from .run import topic_run_claim, topic_run_execute


@shared_task(name="topics.run_topic_model", acks_late=True, reject_on_worker_lost=True)
def run_topic_model(run_id: int) -> dict:
    """Claim the topic run (a duplicate delivery finds it taken) and do it to the end."""
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
