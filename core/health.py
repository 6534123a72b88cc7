"""``/healthz`` (liveness) and ``/readyz`` (readiness) for load balancers and compose's health checks.

Both are answered first in the middleware chain, before host validation and the HTTPS redirect, so a probe
on 127.0.0.1 over plain http works whatever ``ALLOWED_HOSTS`` and the TLS settings say; they read no
session and write nothing.

- ``/healthz``: 200 and ``ok`` while the process answers; touches nothing.
- ``/readyz``: 200 when the database answers, the task broker accepts a connection and every migration is
  applied; otherwise 503, with a JSON body naming each check and what failed (no exception text).
"""

import logging

from django.http import HttpResponse, JsonResponse

logger = logging.getLogger(__name__)

PATHS = {"/healthz", "/healthz/", "/readyz", "/readyz/"}


def check_database() -> str | None:
    from django.db import connection

    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    except Exception:
        logger.warning("readiness: the database does not answer", exc_info=True)
        return "the database does not answer"
    return None


def check_migrations() -> str | None:
    from django.db import connection
    from django.db.migrations.executor import MigrationExecutor

    try:
        executor = MigrationExecutor(connection)
        plan = executor.migration_plan(executor.loader.graph.leaf_nodes())
    except Exception:
        logger.warning("readiness: the migrations cannot be read", exc_info=True)
        return "the migrations cannot be read"
    if plan:
        return f"{len(plan)} migration(s) not applied: run manage.py migrate"
    return None


def check_broker() -> str | None:
    # The site's app (causalqa_site.celery), made the current one when the site package loads.
    from celery import current_app as app

    try:
        with app.connection_for_write() as conn:
            conn.ensure_connection(max_retries=1, timeout=3)
    except Exception:
        logger.warning("readiness: the task broker does not answer", exc_info=True)
        return "the task broker does not answer"
    return None


CHECKS = {"database": check_database, "migrations": check_migrations, "broker": check_broker}


def readiness() -> tuple[bool, dict[str, str]]:
    results = {}
    for name, check in CHECKS.items():
        if name == "migrations" and results.get("database") != "ok":
            results[name] = "not checked: the database does not answer"
            continue
        problem = check()
        results[name] = problem or "ok"
    return all(value == "ok" for value in results.values()), results


class HealthMiddleware:
    """Answers the two probes before any other middleware runs."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if request.path not in PATHS or request.method not in ("GET", "HEAD"):
            return self.get_response(request)
        if request.path.startswith("/healthz"):
            return HttpResponse("ok", content_type="text/plain")
        ready, checks = readiness()
        return JsonResponse(
            {"status": "ready" if ready else "not ready", "checks": checks}, status=200 if ready else 503
        )
