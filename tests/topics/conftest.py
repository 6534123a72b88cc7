"""Fixtures for the topics tests: the generation tests' fake model server and endpoint (class balance starts
generation jobs; an endpoint may embed the questions), and embeddings from that server."""

import pytest

from tests.generation.conftest import (  # noqa: F401 - fixtures, autouse ones included
    api_key,
    endpoint,
    fake_llm,
    fresh_limiters,
    prompt_templates,
    quick_generation_settings,
)


@pytest.fixture
def endpoint_embeddings(settings, fake_llm):
    """Topic embeddings from the fake server's embeddings endpoint."""
    settings.TOPIC_EMBEDDINGS = "endpoint"
    settings.EMBEDDING_MODEL = "fake-embedding"
    settings.EMBEDDING_BASE_URL = fake_llm.base_url
    return fake_llm
