"""API tokens: issued per person and per project, stored hashed, shown once, with an expiry and a revoke.

A token acts as its user only in the projects it names, with the user's role there
(``annotation.permissions`` reads the scope the authentication leaves on the user). Pages and commands call
these services; the key, its hash, the revoke and the check of a key are the platform's (``core.api.tokens``).
"""

import secrets
from datetime import timedelta

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from annotation.models import Membership, Project
from annotation.permissions import Role, has_role, projects_for_user
from core.api.tokens import KEY_PREFIX, PREFIX_LENGTH, active_tokens, key_hash, token_revoke
from core.models import ApiToken

EXPIRY_DAYS = (30, 90, 365)
DEFAULT_EXPIRY_DAYS = 90


class TokenError(Exception):
    """A token cannot be issued; the message says why."""


def token_key_may_go_to(issuer, member) -> bool:
    """Whether ``issuer`` may issue a key for ``member`` and read it: never for someone whose powers reach beyond
    the projects (an administrator, a staff member); they issue their own on their token page."""
    if issuer.pk == member.pk:
        return True
    return not (member.is_superuser or member.is_staff)


@transaction.atomic
def token_issue(
    *, user, projects: list[Project], issued_by, days: int = DEFAULT_EXPIRY_DAYS, name: str = ""
) -> tuple[ApiToken, str]:
    """A new token for ``user`` reaching ``projects``; returns it with its key, which is never stored."""
    if days not in EXPIRY_DAYS:
        raise TokenError(
            _("A token expires after %(choices)s days.") % {"choices": ", ".join(map(str, EXPIRY_DAYS))}
        )
    if not projects:
        raise TokenError(_("Choose at least one project for the token."))
    if not token_key_may_go_to(issued_by, user):
        raise TokenError(
            _("%(user)s administers the site: only they can issue their own token, on their API token page.")
            % {"user": user.get_username()}
        )
    reachable = set(projects_for_user(user).values_list("pk", flat=True))
    outside = [project.slug for project in projects if project.pk not in reachable]
    if outside:
        raise TokenError(
            _("%(user)s is not a member of: %(projects)s.")
            % {"user": user.get_username(), "projects": ", ".join(outside)}
        )
    if issued_by.pk != user.pk:
        for project in projects:
            if not has_role(issued_by, project, Role.OWNER):
                raise TokenError(
                    _("Only an owner of %(project)s issues tokens for it.") % {"project": project.name}
                )
    key = KEY_PREFIX + secrets.token_urlsafe(32)
    token = ApiToken.objects.create(
        user=user,
        name=name[:100],
        prefix=key[:PREFIX_LENGTH],
        key_hash=key_hash(key),
        issued_by=issued_by,
        expires_at=timezone.now() + timedelta(days=days),
    )
    token.projects.set(projects)
    return token, key


@transaction.atomic
def token_issue_for_member(
    *, project: Project, member, issued_by, days: int = DEFAULT_EXPIRY_DAYS
) -> tuple[ApiToken, str]:
    """An owner's token for a member, reaching this project only. It replaces the member's earlier tokens that
    reached only this project."""
    if not Membership.objects.filter(project=project, user=member).exists():
        raise TokenError(_("%(user)s is not a member of this project.") % {"user": member.get_username()})
    token, key = token_issue(user=member, projects=[project], issued_by=issued_by, days=days)
    for earlier in active_tokens().filter(user=member, projects=project).exclude(pk=token.pk):
        if set(earlier.projects.values_list("pk", flat=True)) == {project.pk}:
            token_revoke(token=earlier)
    return token, key


@transaction.atomic
def token_withdraw_project(*, project: Project, member) -> int:
    """An owner takes their project out of every token of ``member``; a token left with no project is revoked.
    Returns how many tokens reached the project."""
    tokens = list(active_tokens().filter(user=member, projects=project))
    for token in tokens:
        token.projects.remove(project)
        if not token.projects.exists():
            token_revoke(token=token)
    return len(tokens)
