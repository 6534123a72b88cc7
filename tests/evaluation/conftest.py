"""Fixtures for benchmark runs: the fake model server and its endpoint come from the generation tests."""

import pytest

from tests.generation.conftest import (  # noqa: F401 - fixtures, used by name
    api_key,
    endpoint,
    fake_llm,
    fresh_limiters,
    prompt_templates,
    quick_generation_settings,
)
from tests.workers import QUICK_JOB_SETTINGS, CeleryWorker


@pytest.fixture
def worker(transactional_db, tmp_path, api_key):
    """A real worker that notices a dead colleague within seconds, started once the API key is in the environment."""
    worker = CeleryWorker(log_path=tmp_path / "worker.log", extra_env=QUICK_JOB_SETTINGS)
    worker.start()
    yield worker
    worker.stop()
