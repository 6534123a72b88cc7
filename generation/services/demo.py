"""The demo model's site-wide endpoint: registered by ``make run`` (the launcher) when it starts the demo model
(``generation.demo_model``), switched off when it runs without it. Every door that asks whether a text came
from the scripted demo model asks :func:`is_scripted`."""

from django.db import transaction

from ..demo_model import DEMO_ENDPOINT_NAME, DEMO_MODEL_NAME
from ..models import ModelEndpoint


def is_scripted(model_name: str | None) -> bool:
    """Whether a model name recorded in a provenance or a call is the scripted demo model's."""
    return model_name == DEMO_MODEL_NAME


@transaction.atomic
def demo_endpoint_register(base_url: str) -> ModelEndpoint:
    """Create, or point at ``base_url`` and switch on, the site-wide endpoint of the demo model."""
    wanted = {
        "base_url": base_url,
        "model": DEMO_MODEL_NAME,
        "api_key_env": "",
        "supports_json_schema": True,
        "max_concurrency": 8,
        "is_active": True,
    }
    endpoint = ModelEndpoint.objects.select_for_update().filter(project=None, name=DEMO_ENDPOINT_NAME).first()
    if endpoint is None:
        endpoint = ModelEndpoint(project=None, name=DEMO_ENDPOINT_NAME, **wanted)
        endpoint.full_clean()
        endpoint.save()
        return endpoint
    changed = [name for name, value in wanted.items() if getattr(endpoint, name) != value]
    for name in changed:
        setattr(endpoint, name, wanted[name])
    if changed:
        endpoint.save(update_fields=changed)
    return endpoint


def demo_endpoint_switch_off() -> None:
    """Without the demo model running, its endpoint is not offered (nothing would answer it)."""
    ModelEndpoint.objects.filter(project=None, name=DEMO_ENDPOINT_NAME, is_active=True).update(
        is_active=False
    )
