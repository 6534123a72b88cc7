"""Invitations by e-mail for people without an account: the owner names an address and a role; the link sent
there (and shown to the owner, to pass on by hand) creates the account and the membership on first visit.

The e-mail goes through Django's mail settings (the console backend unless EMAIL_BACKEND says otherwise), so an
installation without a mail server still works: the owner copies the link from the members page.
"""

import hashlib
import secrets
from datetime import timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.core.mail import send_mail
from django.core.validators import validate_email
from django.db import transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext as _

from .models import Invitation, Membership, Project, ProjectChange
from .permissions import Role

INVITATION_DAYS = 14


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def invitation_create(
    *, project: Project, by, email: str, role: str, expertise: list[str], link_for
) -> tuple:
    """Invite ``email`` (no account has it) as ``role``; ``link_for(token)`` makes the link. Returns
    (invitation, link). An earlier open invitation of the same address to the project is replaced."""
    email = (email or "").strip()
    try:
        validate_email(email)
    except ValidationError:
        raise ValidationError(
            {"user": _("“%(email)s” is not an e-mail address.") % {"email": email[:100]}}
        ) from None
    if role not in Role.values:
        raise ValidationError({"role": _("Choose annotator, curator or owner.")})
    if get_user_model().objects.filter(email__iexact=email).exists():
        raise ValidationError(
            {"user": _("Someone already has an account with “%(email)s”.") % {"email": email}}
        )
    token = secrets.token_urlsafe(32)
    with transaction.atomic():
        Invitation.objects.filter(project=project, email__iexact=email, accepted_at__isnull=True).delete()
        invitation = Invitation.objects.create(
            project=project,
            email=email,
            role=role,
            expertise=expertise,
            token_digest=_digest(token),
            invited_by=by,
            expires_at=timezone.now() + timedelta(days=INVITATION_DAYS),
        )
    link = link_for(token)
    inviter = by.get_full_name() or by.get_username()
    send_mail(
        subject=_("Invitation to %(project)s on CausalQA Studio") % {"project": project.name},
        message=_(
            "%(inviter)s invites you to the project “%(project)s” as %(role)s.\n\n"
            "Open this link to choose a username and a password (it works once, for %(days)s days):\n%(link)s\n"
        )
        % {
            "inviter": inviter,
            "project": project.name,
            "role": Membership.Role(role).label,
            "days": INVITATION_DAYS,
            "link": link,
        },
        from_email=settings.DEFAULT_FROM_EMAIL,
        recipient_list=[email],
    )
    return invitation, link


def invitation_open(token: str) -> Invitation:
    """The open invitation behind a link; ValidationError saying why when it cannot be used."""
    invitation = (
        Invitation.objects.select_related("project").filter(token_digest=_digest(token or "")).first()
    )
    if invitation is None:
        raise ValidationError(_("This invitation link is not valid; ask the project's owner for a new one."))
    if invitation.accepted_at is not None:
        raise ValidationError(_("This invitation was already used; sign in with the account it created."))
    if invitation.expires_at <= timezone.now():
        raise ValidationError(_("This invitation has expired; ask the project's owner for a new one."))
    return invitation


def invitation_accept(*, token: str, username: str, password: str):
    """Create the invited person's account and membership; returns the new user."""
    username = (username or "").strip()
    with transaction.atomic():
        invitation = invitation_open(token)
        invitation = Invitation.objects.select_for_update().get(pk=invitation.pk)
        if invitation.accepted_at is not None:
            raise ValidationError(_("This invitation was already used; sign in with the account it created."))
        users = get_user_model()
        if not username:
            raise ValidationError({"username": _("Choose a username.")})
        username_field = users._meta.get_field(users.USERNAME_FIELD)
        try:
            username_field.run_validators(username)
        except ValidationError as bad:
            raise ValidationError({"username": bad.messages}) from None
        if users.objects.filter(Q(username__iexact=username)).exists():
            raise ValidationError({"username": _("The username “%(name)s” is taken.") % {"name": username}})
        candidate = users(username=username, email=invitation.email)
        try:
            validate_password(password, candidate)
        except ValidationError as bad:
            raise ValidationError({"password": bad.messages}) from None
        user = users.objects.create_user(username=username, email=invitation.email, password=password)
        Membership.objects.create(
            project=invitation.project, user=user, role=invitation.role, expertise=invitation.expertise
        )
        invitation.accepted_at = timezone.now()
        invitation.accepted_by = user
        invitation.save(update_fields=["accepted_at", "accepted_by"])
        ProjectChange.objects.create(
            project=invitation.project,
            user=user,
            kind=ProjectChange.Kind.MEMBER_ADDED,
            subject=username,
            details={"role": [None, invitation.role], "invited_by_email": [None, invitation.email]},
        )
    return user


def invitation_withdraw(*, project: Project, invitation_id: int) -> str:
    invitation = Invitation.objects.filter(
        project=project, pk=invitation_id, accepted_at__isnull=True
    ).first()
    if invitation is None:
        raise ValidationError(_("There is no such open invitation in this project."))
    invitation.delete()
    return invitation.email


def invitations_open(project: Project):
    return Invitation.objects.filter(project=project, accepted_at__isnull=True).order_by("email")
