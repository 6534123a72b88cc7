from tests.generation.conftest import api_key, endpoint, fake_llm, prompt_templates  # noqa: F401 - fixtures by name

import pytest
from django.core.cache import cache


@pytest.fixture(autouse=True)
def fresh_throttles():
    """Throttle counters live in the cache; each test starts with none."""
    cache.clear()
    yield
    cache.clear()
