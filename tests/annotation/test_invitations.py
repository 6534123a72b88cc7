"""An owner invites someone without an account by e-mail; the link creates the account and the membership on
first visit, once, and not after it expires. The e-mail goes through the console backend unless configured."""

import re
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.core import mail
from django.urls import reverse
from django.utils import timezone

from annotation.models import Invitation, Membership, ProjectChange
from tests.factories import PASSWORD

pytestmark = pytest.mark.django_db

STRONG = "cavalo-bateria-grampo-7"


def invite(client, project, email="nova@usp.br", role="annotator"):
    return client.post(
        reverse("annotation:members", args=[project.slug]),
        {"add-user": email, "add-role": role, "add-expertise": "saúde"},
    )


def link_in(message) -> str:
    return re.search(r"https?://\S+/invitations/\S+/", message.body).group(0)


@pytest.mark.allow_skip
def test_without_configuration_invitations_are_printed_by_the_console_backend(monkeypatch):
    import os

    from causalqa_site import settings as site_settings

    if "EMAIL_BACKEND" in os.environ:
        pytest.skip("EMAIL_BACKEND is set in this environment")
    # The test runner swaps in its own backend (mail.outbox); the site's own setting is the module's.
    assert site_settings.EMAIL_BACKEND == "django.core.mail.backends.console.EmailBackend"


def test_an_owner_invites_an_address_without_an_account_and_sees_the_link(client_for, owner, project):
    response = invite(client_for(owner), project)
    html = response.content.decode()
    assert response.status_code == 200
    assert len(mail.outbox) == 1
    assert mail.outbox[0].to == ["nova@usp.br"]
    link = link_in(mail.outbox[0])
    assert link in html, "the owner can pass the link on by hand"
    invitation = Invitation.objects.get()
    assert (invitation.email, invitation.role, invitation.expertise) == (
        "nova@usp.br",
        "annotator",
        ["saúde"],
    )
    assert link.rstrip("/").rsplit("/", 1)[-1] not in invitation.token_digest, "only a digest is kept"
    assert (
        "Invitations not yet accepted"
        in client_for(owner).get(reverse("annotation:members", args=[project.slug])).content.decode()
    )


def test_the_link_creates_the_account_and_the_membership_once(client, client_for, owner, project):
    invite(client_for(owner), project, role="curator")
    link = link_in(mail.outbox[0])
    client.logout()
    path = link[link.index("/invitations/") :]
    page = client.get(path)
    assert page.status_code == 200
    assert "nova@usp.br" in page.content.decode()
    response = client.post(path, {"username": "nova", "password1": STRONG, "password2": STRONG})
    assert response.status_code == 302
    assert response["Location"] == reverse("annotation:project_detail", args=[project.slug])
    user = get_user_model().objects.get(username="nova")
    assert user.email == "nova@usp.br"
    assert user.check_password(STRONG)
    assert Membership.objects.get(user=user, project=project).role == "curator"
    assert ProjectChange.objects.filter(kind="member_added", subject="nova").exists()
    client.logout()
    again = client.get(path)
    assert again.status_code == 410
    assert "already used" in again.content.decode()


def test_a_bad_username_or_password_is_named_and_nothing_is_created(client, client_for, owner, project):
    invite(client_for(owner), project)
    path = link_in(mail.outbox[0])
    path = path[path.index("/invitations/") :]
    client.logout()
    response = client.post(path, {"username": "owner", "password1": "123", "password2": "123"})
    assert response.status_code == 400
    html = response.content.decode()
    assert "is taken" in html
    assert not get_user_model().objects.filter(email="nova@usp.br").exists()
    response = client.post(path, {"username": "nova", "password1": "123", "password2": "123"})
    assert response.status_code == 400
    assert "too short" in response.content.decode()


def test_an_expired_or_unknown_link_says_so(client, client_for, owner, project):
    invite(client_for(owner), project)
    Invitation.objects.update(expires_at=timezone.now() - timedelta(minutes=1))
    path = link_in(mail.outbox[0])
    client.logout()
    assert "expired" in client.get(path[path.index("/invitations/") :]).content.decode()
    assert client.get("/invitations/nada/").status_code == 410


def test_an_address_that_has_an_account_is_added_not_invited(client_for, owner, project, annotator):
    from tests.factories import UserFactory

    UserFactory(username="davi", email="davi@usp.br")
    response = invite(client_for(owner), project, email="davi@usp.br")
    assert response.status_code == 302
    assert Membership.objects.filter(user__username="davi", project=project).exists()
    assert not Invitation.objects.exists()
    assert mail.outbox == []


def test_only_owners_invite_and_withdraw(client_for, owner, curator, project):
    assert invite(client_for(curator), project).status_code == 403
    invite(client_for(owner), project)
    invitation = Invitation.objects.get()
    url = reverse("annotation:invitation_withdraw", args=[project.slug, invitation.pk])
    assert client_for(curator).post(url).status_code == 403
    client_for(owner).post(url)
    assert not Invitation.objects.exists()


def test_signed_in_people_are_told_to_sign_out_first(client_for, owner, annotator, project):
    invite(client_for(owner), project)
    path = link_in(mail.outbox[0])
    client = client_for(annotator)
    response = client.post(
        path[path.index("/invitations/") :], {"username": "x", "password1": PASSWORD, "password2": PASSWORD}
    )
    assert "sign out first" in response.content.decode()
    assert not get_user_model().objects.filter(username="x").exists()
