import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "causalqa_site.settings")

app = Celery("causalqa_site")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@app.task(name="causalqa.ping")
def ping(payload: str = "pong") -> str:
    """Answers with what it was given; used by health checks and the round-trip test."""
    return payload
