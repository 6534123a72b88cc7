import os

from celery import Celery
from celery.signals import worker_init

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "causalqa_site.settings")

app = Celery("causalqa_site")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@worker_init.connect
def preload_model_client(**kwargs) -> None:
    """Import the openai SDK once when a worker starts (before a prefork pool forks its processes), not in
    the first model call of each job's process: ~0.5 s of CPU that delayed every model of a run at its start.
    The web processes never import it."""
    import openai  # noqa: F401


@app.task(name="causalqa.sweep_stale", ignore_result=True)
def sweep_stale_task() -> dict:
    """Celery beat's periodic sweep: resume or fail the background work whose worker died (every kind's
    sweep, registered by its app: annotation.background.sweep_register)."""
    from annotation.background import sweep_stale

    return sweep_stale()


@app.task(name="causalqa.ping")
def ping(payload: str = "pong") -> str:
    """Answers with what it was given; used by health checks and the round-trip test."""
    return payload
