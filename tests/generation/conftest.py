"""Fixtures for the generation tests: the fake model server, an endpoint pointing at it, quick retries."""

import pytest
from django.conf import settings as django_settings

from tests.fake_llm import FakeLLM

SECRET = "sk-test-0123456789-very-secret"
KEY_ENV = "CAUSALQA_TEST_API_KEY"


@pytest.fixture
def fake_llm():
    with FakeLLM() as server:
        yield server


@pytest.fixture
def api_key(monkeypatch):
    monkeypatch.setenv(KEY_ENV, SECRET)
    return SECRET


@pytest.fixture
def prompt_templates(db):
    """The shipped templates (`migrate` and every flush load them; loading again stores nothing new)."""
    from generation.services import prompt_templates_load

    prompt_templates_load()


@pytest.fixture
def endpoint(db, fake_llm, api_key, prompt_templates):
    from generation.models import ModelEndpoint

    return ModelEndpoint.objects.create(
        name="fake",
        base_url=fake_llm.base_url,
        model="fake-model-1",
        api_key_env=KEY_ENV,
        max_concurrency=4,
        requests_per_minute=0,
        timeout_seconds=5,
        price_input_per_mtok="2.50",
        price_output_per_mtok="10.00",
    )


@pytest.fixture(autouse=True)
def quick_generation_settings(settings):
    settings.GENERATION_BACKOFF_SECONDS = 0.02
    settings.GENERATION_BACKOFF_MAX_SECONDS = 0.2
    settings.GENERATION_HEARTBEAT_SECONDS = 0.2


@pytest.fixture(autouse=True)
def fresh_limiters():
    """Limiter state belongs to an endpoint id; ids repeat between tests on SQLite, so start clean."""
    from generation.services import endpoints

    endpoints._limiters.clear()
    if django_settings.REDIS_URL:
        client = endpoints._redis_client()
        keys = list(client.scan_iter("causalqa:limiter:*"))
        if keys:
            client.delete(*keys)
    yield
    endpoints._limiters.clear()


def run_now(job):
    """Run a job in this process, as a worker would (claim, then run)."""
    from generation.services import job_claim, job_run

    assert job_claim(job_id=job.pk, owner="test-run"), "the job could not be claimed"
    result = job_run(job_id=job.pk, owner="test-run")
    job.refresh_from_db()
    return result
