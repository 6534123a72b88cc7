"""API tokens as the platform sees them: a key, its hash, its life (expiry, revoke) and the check of a key.

A token acts as its user only in the rows it names (``settings.API_TOKEN_SCOPE_MODEL``, the projects);
``core.api.authentication`` leaves them on the user. Who may issue a token for what is the domain's rule
(``evaluation.tokens``).
"""

import hashlib
from datetime import timedelta

from django.utils import timezone

from core.models import ApiToken

KEY_PREFIX = "cqa_"
PREFIX_LENGTH = 12  # "cqa_" and 8 characters of the secret: enough to recognise a key in a list

LAST_USED_PRECISION = timedelta(minutes=1)  # one write per token per minute at most


def key_hash(key: str) -> str:
    # The key is 32 random bytes: a plain SHA-256 is enough (nothing to guess, unlike a password).
    return hashlib.sha256(key.encode()).hexdigest()


def token_revoke(*, token: ApiToken) -> None:
    ApiToken.objects.filter(pk=token.pk, revoked_at__isnull=True).update(revoked_at=timezone.now())


def active_tokens():
    return ApiToken.objects.filter(revoked_at__isnull=True, expires_at__gt=timezone.now())


def token_authenticate(key: str) -> ApiToken | None:
    """The live token with this key (its user and scope loaded), or None. Marks when it was last used."""
    token = (
        ApiToken.objects.select_related("user")
        .filter(key_hash=key_hash(key), revoked_at__isnull=True)
        .prefetch_related("projects")
        .first()
    )
    if token is None:
        return None
    now = timezone.now()
    if token.expires_at <= now:
        return None
    if token.last_used_at is None or token.last_used_at < now - LAST_USED_PRECISION:
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
    return token
