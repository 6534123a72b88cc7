import gc
import os

from celery import Celery
from celery.signals import worker_init

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "causalqa_site.settings")

app = Celery("causalqa_site")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@worker_init.connect
def worker_started(**kwargs) -> None:
    """When a worker starts (Django set up, before a prefork pool forks its processes): import the openai SDK
    once, not in the first model call of each job's process (~0.5 s of CPU that delayed every model of a run
    at its start; the web processes never import it); then freeze everything loaded so far out of the
    garbage collector's passes, as the web workers do (``causalqa_site.wsgi``). A run's calls keep few
    objects alive, but their young ones reach the oldest generation, whose passes then walked Django, the
    apps and the SDK (~190,000 objects) five or six times in a run of three models: 0.5–0.6 s of 20 s with
    every lane stopped, against 0.17–0.20 s frozen (measured in the run's process)."""
    import openai  # noqa: F401

    gc.freeze()


@app.task(name="causalqa.sweep_stale", ignore_result=True)
def sweep_stale_task() -> dict:
    """Celery beat's periodic sweep: resume or fail the background work whose worker died (every kind's
    sweep, registered by its app: core.background.sweep_register)."""
    from core.background import sweep_stale

    return sweep_stale()


@app.task(name="causalqa.ping")
def ping(payload: str = "pong") -> str:
    """Answers with what it was given; used by health checks and the round-trip test."""
    return payload
