"""Model endpoints: the default one from the environment, client settings, shared limits.

The API key is read from the environment variable the endpoint names, at the moment a
client is built, and goes nowhere else: not to the database, not to a page, not to a log.
"""

import os
import socket
import threading
from dataclasses import dataclass
from decimal import Decimal
from urllib.parse import urlsplit

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils.translation import gettext as _

from ..llm import EndpointConfig, Limits, LocalLimiter, RedisLimiter
from ..llm.guard import AddressPolicy, RefusedAddress, check_address
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
    wanted = {
        "base_url": base_url,
        "model": model,
        "api_key_env": settings.LLM_API_KEY_ENV,
        "is_active": True,
    }
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


def environment_endpoint() -> ModelEndpoint | None:
    """The site-wide endpoint of LLM_BASE_URL / LLM_MODEL as start-up stored it (``endpoint_from_environment``
    runs after ``migrate`` and in the commands that call models), read only: pages never write on GET."""
    if not (settings.LLM_BASE_URL.strip() and settings.LLM_MODEL.strip()):
        return None
    return ModelEndpoint.objects.filter(from_environment=True, is_active=True).first()


@transaction.atomic
def endpoint_create(*, project, **fields) -> ModelEndpoint:
    """A model endpoint of ``project`` (None: site-wide), checked as the model checks it; every door calls this."""
    endpoint = ModelEndpoint(project=project, **fields)
    endpoint.full_clean()
    endpoint.save()
    return endpoint


@transaction.atomic
def endpoint_update(*, endpoint: ModelEndpoint, **fields) -> ModelEndpoint:
    for name, value in fields.items():
        setattr(endpoint, name, value)
    endpoint.full_clean()
    endpoint.save()
    return endpoint


def api_key_is_set(endpoint: ModelEndpoint) -> bool:
    return bool(endpoint.api_key_env and os.environ.get(endpoint.api_key_env))


def url_origin(url: str) -> str:
    """``https://API.example.com/v1`` → ``https://api.example.com:443``: where a request goes."""
    parts = urlsplit(url)
    scheme = (parts.scheme or "").lower()
    try:
        port = parts.port or {"http": 80, "https": 443}.get(scheme, 0)
    except ValueError:
        port = 0
    return f"{scheme}://{(parts.hostname or '').lower()}:{port}"


def key_destinations(api_key_env: str) -> set[str]:
    """The origins that site-wide endpoints (set up by an admin or the environment) send this key to."""
    urls = ModelEndpoint.objects.filter(project=None, api_key_env=api_key_env).values_list(
        "base_url", flat=True
    )
    return {url_origin(url) for url in urls}


def key_may_be_sent(*, project_id: int | None, base_url: str, api_key_env: str) -> bool:
    """Whether an endpoint may send the server's key in ``api_key_env`` to ``base_url``.

    The keys live in the server's environment, so only an admin decides where they go: a site-wide
    endpoint may use any key variable, a project's endpoint only one that a site-wide endpoint already
    sends to the same origin. Otherwise a project owner could point an endpoint at their own server and
    read the site's key from the request.
    """
    if not api_key_env or project_id is None:
        return True
    return url_origin(base_url) in key_destinations(api_key_env)


def project_endpoint_refusal(base_url: str) -> str | None:
    """Why a project's endpoint at ``base_url`` would be refused when it connects, if it resolves now to an address
    the site does not allow (a name that does not resolve here is left to the check at connect time)."""
    host = urlsplit(base_url).hostname or ""
    try:
        found = socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError, OSError):
        return None
    policy = AddressPolicy.from_setting(settings.LLM_ALLOWED_HOSTS)
    for info in found:
        try:
            check_address(policy, host, info[4][0])
        except RefusedAddress as exc:
            return str(exc)
    return None


def endpoint_config(endpoint: ModelEndpoint, params: dict | None = None) -> EndpointConfig:
    """The client settings of an endpoint; ``params`` (a job's decoding parameters) override its defaults."""
    return EndpointConfig(
        base_url=endpoint.base_url,
        model=endpoint.model,
        api_key=os.environ.get(endpoint.api_key_env) if _key_allowed(endpoint) else None,
        api_key_env=endpoint.api_key_env,
        params={**(endpoint.default_params or {}), **(params or {})},
        structured_output=endpoint.supports_json_schema,
        timeout=endpoint.timeout_seconds,
        max_retries=endpoint.max_retries,
        max_attempts=endpoint.max_attempts,
        backoff_base=settings.GENERATION_BACKOFF_SECONDS,
        backoff_max=settings.GENERATION_BACKOFF_MAX_SECONDS,
        price_input_per_mtok=Decimal(endpoint.price_input_per_mtok),
        price_output_per_mtok=Decimal(endpoint.price_output_per_mtok),
        max_connections=max(1, endpoint.max_concurrency),
        # A project owner's endpoint reaches only the hosts the site allows; an admin's site-wide one anything.
        address_policy=None
        if endpoint.project_id is None
        else AddressPolicy.from_setting(settings.LLM_ALLOWED_HOSTS),
    )


def _key_allowed(endpoint: ModelEndpoint) -> bool:
    return bool(endpoint.api_key_env) and key_may_be_sent(
        project_id=endpoint.project_id, base_url=endpoint.base_url, api_key_env=endpoint.api_key_env
    )


_limiters: dict[int, object] = {}
_limiters_lock = threading.Lock()
_redis = None


def limiter_for(endpoint: ModelEndpoint):
    """The limiter every job of this process uses for the endpoint: Redis-backed when Redis is configured."""
    limits = Limits(
        max_concurrency=endpoint.max_concurrency, requests_per_minute=endpoint.requests_per_minute
    )
    with _limiters_lock:
        limiter = _limiters.get(endpoint.pk)
        if limiter is None:
            if settings.REDIS_URL:
                # Endpoint ids are per database; a Redis shared by several databases must not mix them.
                database = settings.DATABASES["default"]["NAME"]
                limiter = RedisLimiter(
                    _redis_client(),
                    key=f"{database}:endpoint-{endpoint.pk}",
                    limits=limits,
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


@dataclass(frozen=True)
class ConnectionTest:
    """What *Test connection* found: whether the endpoint answered, in plain words for the page."""

    ok: bool
    message: str
    reply: str = ""
    latency_ms: int = 0


def endpoint_test_connection(endpoint: ModelEndpoint) -> ConnectionTest:
    """One call asking for one token, with no retry; every door (page, command) calls this.

    An answer counts even when it is not valid JSON (one token rarely is): the server, the key and the model
    name all work. A failure is told in the reader's language from its kind, never from exception text.
    """
    from dataclasses import replace

    from ..llm import LLMClient, PromptRequest

    config = replace(
        endpoint_config(endpoint, params={"max_tokens": 1, "temperature": 0}),
        max_attempts=1,
        max_retries=0,
        timeout=min(endpoint.timeout_seconds, 20.0),
    )
    client = LLMClient(config)
    try:
        result = client.complete(PromptRequest(system="", user="Reply with OK.", schema={}))
    finally:
        client.close()
    last = result.attempts[-1] if result.attempts else None
    if last is not None and last.outcome in ("ok", "invalid"):
        return ConnectionTest(
            ok=True,
            message=_("It answers: model “%(model)s” replied in %(ms)s ms.")
            % {"model": endpoint.model, "ms": last.latency_ms},
            reply=(last.raw or "")[:200],
            latency_ms=last.latency_ms,
        )
    return ConnectionTest(ok=False, message=_connection_problem(endpoint, config, last))


def _connection_problem(endpoint: ModelEndpoint, config, attempt) -> str:
    status = attempt.status if attempt is not None else None
    outcome = attempt.outcome if attempt is not None else ""
    error = attempt.error if attempt is not None else ""
    if error.startswith("refused to connect"):
        return _(
            "This address is not allowed for a project's endpoint: private, loopback and link-local addresses "
            "are refused unless the site lists them in LLM_ALLOWED_HOSTS. A site admin can add the server as a "
            "site-wide endpoint instead."
        )
    if outcome == "timeout":
        return _("No answer from %(url)s within %(seconds)s s.") % {
            "url": endpoint.base_url,
            "seconds": f"{config.timeout:g}",
        }
    if outcome == "connection_error":
        return _("Nothing answers at %(url)s: is the server running, and is the address right?") % {
            "url": endpoint.base_url
        }
    if status == 401:
        if endpoint.api_key_env and not config.api_key:
            return _("The server wants a key, and %(variable)s is not set in the server's environment.") % {
                "variable": endpoint.api_key_env
            }
        return _("The server refused the key (401): check the API key in %(variable)s.") % {
            "variable": endpoint.api_key_env or _("the endpoint's key variable")
        }
    if status == 403:
        return _("The key may not use the model “%(model)s” (403).") % {"model": endpoint.model}
    if status == 404:
        return _(
            "Not found (404): check the model name “%(model)s” and that the base URL ends where the API "
            "begins (often /v1)."
        ) % {"model": endpoint.model}
    if status == 429 or (status or 0) >= 500:
        return _("The server is busy or failing (%(status)s): try again in a moment.") % {"status": status}
    if status:
        return _("The server refused the request (%(status)s).") % {"status": status}
    return _("The call did not complete.")
