import pytest
from django.core.cache import cache

from tests.generation.conftest import api_key, endpoint, fake_llm, prompt_templates  # noqa: F401 - fixtures by name


@pytest.fixture(autouse=True)
def fresh_counters(monkeypatch):
    """Sign-in and API counters of each test apart from every other's, in a shared Redis as in the local cache."""
    import uuid

    from core import counters

    monkeypatch.setattr(counters, "NAMESPACE", f"count-{uuid.uuid4().hex}")


@pytest.fixture(autouse=True)
def fresh_throttles(settings):
    """Throttle counters live in the cache; each test starts with none. Only an in-process cache is cleared: a
    Redis cache shares its database with the Celery broker (there the counters' keys hold fresh user ids)."""
    local = "LocMemCache" in settings.CACHES["default"]["BACKEND"]
    if local:
        cache.clear()
    yield
    if local:
        cache.clear()
