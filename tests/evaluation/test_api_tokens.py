"""Owners issue and revoke per-project API tokens from the project's API access page; each person makes their
own on their API token page. Keys are shown once and stored hashed."""

import re

import pytest
from django.urls import reverse

from annotation.models import Membership
from core.api.tokens import key_hash
from core.models import ApiToken
from tests.factories import ProjectFactory

pytestmark = pytest.mark.django_db

KEY = re.compile(r'<code class="token-key">([^<]+)</code>')


def issue(client, project, user):
    return client.post(reverse("evaluation:api_token_issue", args=[project.slug, user.pk]))


def shown_key(response) -> str | None:
    found = KEY.search(response.content.decode())
    return found.group(1) if found else None


def test_an_owner_issues_a_token_that_authenticates_its_member(project, client_for, owner, annotator):
    client = client_for(owner)
    page = issue(client, project, annotator)
    key = shown_key(page)
    token = ApiToken.objects.get(user=annotator)
    assert key and token.key_hash == key_hash(key)  # shown once on this response, kept only as its hash
    assert key not in str(ApiToken.objects.values_list().get())
    client.logout()
    response = client.get("/api/v1/projects/", headers={"Authorization": f"Token {key}"})
    assert response.status_code == 200 and response.json()["results"][0]["role"] == "annotator"


def test_issuing_again_replaces_the_old_token_and_revoking_ends_access(project, client_for, owner, annotator):
    client = client_for(owner)
    old = shown_key(issue(client, project, annotator))
    new = shown_key(issue(client, project, annotator))
    assert new != old
    assert ApiToken.objects.filter(user=annotator, revoked_at__isnull=True).count() == 1
    client.post(reverse("evaluation:api_token_revoke", args=[project.slug, annotator.pk]))
    assert not ApiToken.objects.filter(user=annotator, revoked_at__isnull=True).exists()
    client.logout()
    for key in (old, new):
        assert client.get("/api/v1/projects/", headers={"Authorization": f"Token {key}"}).status_code == 401


def test_a_token_issued_by_an_owner_reaches_only_that_project(project, client_for, owner, curator):
    elsewhere = ProjectFactory(slug="elsewhere")
    Membership.objects.create(user=curator, project=elsewhere, role=Membership.Role.OWNER)
    key = shown_key(issue(client_for(owner), project, curator))
    headers = {"Authorization": f"Token {key}"}
    client = client_for(curator)
    client.logout()
    listed = client.get("/api/v1/projects/", headers=headers).json()["results"]
    assert [row["slug"] for row in listed] == [project.slug]
    assert client.get("/api/v1/projects/elsewhere/items/", headers=headers).status_code == 404
    mine = client_for(curator).get(reverse("evaluation:my_api_token")).content.decode()
    assert key not in mine  # nobody reads a key again, not even its owner


def test_an_owner_never_issues_a_token_for_an_administrator(project, client_for, owner, annotator):
    annotator.is_superuser = annotator.is_staff = True
    annotator.save(update_fields=["is_superuser", "is_staff"])
    page = issue(client_for(owner), project, annotator)
    assert page.status_code == 302 and not ApiToken.objects.exists()


@pytest.mark.parametrize(("who", "status"), [("curator", 403), ("annotator", 403), ("outsider", 404)])
def test_only_owners_manage_tokens(request, project, client_for, annotator, who, status):
    client = client_for(request.getfixturevalue(who))
    assert client.get(reverse("evaluation:api_tokens", args=[project.slug])).status_code == status
    assert issue(client, project, annotator).status_code == status
    assert not ApiToken.objects.exists()


def test_tokens_are_issued_only_for_members_and_only_by_post(project, client_for, owner, outsider):
    client = client_for(owner)
    assert issue(client, project, outsider).status_code == 404
    assert client.get(reverse("evaluation:api_token_issue", args=[project.slug, owner.pk])).status_code == 405


def test_a_person_makes_a_token_for_chosen_projects_and_revokes_it(project, client_for, curator):
    other = ProjectFactory(slug="outra")
    Membership.objects.create(user=curator, project=other, role=Membership.Role.ANNOTATOR)
    client = client_for(curator)
    page = client.post(
        reverse("evaluation:my_api_token"), {"name": "script", "projects": [other.pk], "days": 30}
    )
    key = shown_key(page)
    token = ApiToken.objects.get(user=curator)
    assert key and token.key_hash == key_hash(key) and (token.expires_at - token.created).days in (29, 30)
    headers = {"Authorization": f"Token {key}"}
    api = client_for(curator)
    api.logout()
    assert [row["role"] for row in api.get("/api/v1/projects/", headers=headers).json()["results"]] == [
        "annotator"
    ]
    assert api.get(f"/api/v1/projects/{project.slug}/", headers=headers).status_code == 404
    client_for(curator).post(reverse("evaluation:my_api_token_revoke", args=[token.pk]))
    api.logout()
    assert api.get("/api/v1/projects/", headers=headers).status_code == 401


def test_a_person_cannot_make_a_token_for_a_project_they_do_not_belong_to(project, client_for, outsider):
    page = client_for(outsider).post(
        reverse("evaluation:my_api_token"), {"projects": [project.pk], "days": 90}
    )
    assert shown_key(page) is None and not ApiToken.objects.exists()


def test_an_expired_token_is_refused(project, client_for, owner, annotator):
    key = shown_key(issue(client_for(owner), project, annotator))
    ApiToken.objects.update(expires_at="2000-01-01T00:00:00Z")
    client = client_for(annotator)
    client.logout()
    assert client.get("/api/v1/projects/", headers={"Authorization": f"Token {key}"}).status_code == 401
