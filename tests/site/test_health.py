"""``/healthz`` and ``/readyz``: what compose's health checks and a load balancer read."""

import pytest
from django.test import Client, override_settings

from core import health


def test_healthz_answers_without_touching_the_database():
    response = Client().get("/healthz")  # no django_db mark: a query here would fail the test
    assert response.status_code == 200
    assert response.content == b"ok"


@pytest.mark.django_db
def test_readyz_is_ready_with_database_broker_and_migrations():
    response = Client().get("/readyz")
    assert response.status_code == 200, response.content
    assert response.json()["checks"] == {"database": "ok", "migrations": "ok", "broker": "ok"}


@pytest.mark.django_db
@override_settings(ALLOWED_HOSTS=["studio.example.org"], SECURE_SSL_REDIRECT=True)
def test_probes_answer_on_loopback_over_http_whatever_the_hosts_and_tls_settings():
    client = Client(HTTP_HOST="127.0.0.1")
    assert client.get("/healthz").status_code == 200
    assert client.get("/readyz").status_code == 200
    assert client.get("/").status_code == 400  # other pages still validate the host


@pytest.mark.django_db
def test_readyz_names_what_is_not_ready(monkeypatch):
    monkeypatch.setattr(
        health, "CHECKS", {**health.CHECKS, "broker": lambda: "the task broker does not answer"}
    )
    response = Client().get("/readyz")
    assert response.status_code == 503
    body = response.json()
    assert body["status"] == "not ready"
    assert body["checks"]["broker"] == "the task broker does not answer"
    assert body["checks"]["database"] == "ok"


@pytest.mark.django_db
def test_readyz_reports_unapplied_migrations(monkeypatch):
    class Executor:
        def __init__(self, connection):
            self.loader = type("L", (), {"graph": type("G", (), {"leaf_nodes": lambda self: []})()})()

        def migration_plan(self, targets):
            return [("annotation", "0099_x")]

    monkeypatch.setattr("django.db.migrations.executor.MigrationExecutor", Executor)
    response = Client().get("/readyz")
    assert response.status_code == 503
    assert "1 migration(s) not applied" in response.json()["checks"]["migrations"]
