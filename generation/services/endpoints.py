"""Model endpoints: the default one from the environment, client settings, shared limits.

The API key is read from the environment variable the endpoint names, at the moment a
client is built, and goes nowhere else: not to the database, not to a page, not to a log.
"""

import os
import threading
from decimal import Decimal

from django.conf import settings
from django.db import IntegrityError, transaction

from ..llm import EndpointConfig, Limits, LocalLimiter, RedisLimiter
from ..models import ModelEndpoint

ENVIRONMENT_ENDPOINT_NAME = "default"


def endpoint_from_environment() -> ModelEndpoint | None:
    """Create or update the site-wide endpoint described by LLM_BASE_URL / LLM_MODEL / LLM_API_KEY.

    Without LLM_BASE_URL and LLM_MODEL, an endpoint created from them earlier is switched off.
    """
    base_url, model = settings.LLM_BASE_URL.strip(), settings.LLM_MODEL.strip()
    existing = ModelEndpoint.objects.filter(from_environment=True).first()
    if not (base_url and model):
        if existing is not None and existing.is_active:
            existing.is_active = False
            existing.save(update_fields=["is_active"])
        return None
    wanted = {"base_url": base_url, "model": model, "api_key_env": settings.LLM_API_KEY_ENV, "is_active": True}
    if existing is not None:
        changed = [name for name, value in wanted.items() if getattr(existing, name) != value]
        if changed:
            for name in changed:
                setattr(existing, name, wanted[name])
            existing.save(update_fields=changed)
        return existing
    name = ENVIRONMENT_ENDPOINT_NAME
    if ModelEndpoint.objects.filter(project=None, name=name).exists():
        name = f"{ENVIRONMENT_ENDPOINT_NAME} (environment)"
    try:
        with transaction.atomic():
            return ModelEndpoint.objects.create(name=name, from_environment=True, **wanted)
    except IntegrityError:  # created meanwhile by another process
        return ModelEndpoint.objects.filter(from_environment=True).first()


def api_key_is_set(endpoint: ModelEndpoint) -> bool:
    return bool(endpoint.api_key_env and os.environ.get(endpoint.api_key_env))


def endpoint_config(endpoint: ModelEndpoint) -> EndpointConfig:
    return EndpointConfig(
        base_url=endpoint.base_url,
        model=endpoint.model,
        api_key=os.environ.get(endpoint.api_key_env) if endpoint.api_key_env else None,
        api_key_env=endpoint.api_key_env,
        params=dict(endpoint.default_params or {}),
        structured_output=endpoint.supports_json_schema,
        timeout=endpoint.timeout_seconds,
        max_retries=endpoint.max_retries,
        max_attempts=endpoint.max_attempts,
        backoff_base=settings.GENERATION_BACKOFF_SECONDS,
        backoff_max=settings.GENERATION_BACKOFF_MAX_SECONDS,
        price_input_per_mtok=Decimal(endpoint.price_input_per_mtok),
        price_output_per_mtok=Decimal(endpoint.price_output_per_mtok),
        max_connections=max(1, endpoint.max_concurrency),
    )


_limiters: dict[int, object] = {}
_limiters_lock = threading.Lock()
_redis = None


def limiter_for(endpoint: ModelEndpoint):
    """The limiter every job of this process uses for the endpoint: Redis-backed when Redis is configured."""
    limits = Limits(max_concurrency=endpoint.max_concurrency, requests_per_minute=endpoint.requests_per_minute)
    with _limiters_lock:
        limiter = _limiters.get(endpoint.pk)
        if limiter is None:
            if settings.REDIS_URL:
                # Endpoint ids are per database; a Redis shared by several databases must not mix them.
                database = settings.DATABASES["default"]["NAME"]
                limiter = RedisLimiter(
                    _redis_client(), key=f"{database}:endpoint-{endpoint.pk}", limits=limits,
                    lease_seconds=settings.GENERATION_LEASE_SECONDS,
                )
            else:
                limiter = LocalLimiter(limits)
            _limiters[endpoint.pk] = limiter
        limiter.limits = limits  # an edited endpoint takes effect at the next job
        return limiter


def _redis_client():
    global _redis
    if _redis is None:
        import redis

        _redis = redis.Redis.from_url(settings.REDIS_URL, health_check_interval=30)
    return _redis
