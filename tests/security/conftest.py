from tests.generation.conftest import api_key, endpoint, fake_llm, prompt_templates  # noqa: F401 - fixtures by name
