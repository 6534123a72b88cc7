"""API tokens cannot lift anyone above what they already may do: an owner never gets an administrator's key,
a token reaches only its projects with its person's role there, and no key is ever stored or shown twice."""

import pytest
from django.urls import reverse

from annotation.models import Membership
from core.models import ApiToken
from evaluation.tokens import TokenError, token_issue
from tests.factories import ProjectFactory, UserFactory, api_token_key

pytestmark = pytest.mark.django_db


def test_an_owner_sharing_a_project_with_an_administrator_cannot_mint_the_administrators_key(
    project, client_for, owner
):
    admin = UserFactory(username="admin", is_superuser=True, is_staff=True)
    Membership.objects.create(user=admin, project=project, role=Membership.Role.ANNOTATOR)
    page = client_for(owner).post(reverse("evaluation:api_token_issue", args=[project.slug, admin.pk]))
    assert page.status_code == 302
    assert not ApiToken.objects.filter(user=admin).exists()
    with pytest.raises(TokenError):
        token_issue(user=admin, projects=[project], issued_by=owner)


def test_an_administrators_own_token_reaches_only_the_projects_it_names(project, client):
    admin = UserFactory(username="admin", is_superuser=True, is_staff=True)
    secret = ProjectFactory(slug="segredo")
    headers = {"Authorization": f"Token {api_token_key(admin, [project])}"}
    listed = client.get("/api/v1/projects/", headers=headers).json()["results"]
    assert [row["slug"] for row in listed] == [project.slug]
    assert client.get(f"/api/v1/projects/{secret.slug}/items/", headers=headers).status_code == 404


def test_a_token_carries_its_persons_role_not_more(project, client, annotator):
    headers = {"Authorization": f"Token {api_token_key(annotator)}"}
    assert client.get(f"/api/v1/projects/{project.slug}/agreement/", headers=headers).status_code == 403
    assert client.post(f"/api/v1/projects/{project.slug}/releases/", {}, headers=headers).status_code == 403


def test_a_token_stops_when_its_person_leaves_the_project(project, client, annotator):
    headers = {"Authorization": f"Token {api_token_key(annotator)}"}
    Membership.objects.filter(user=annotator, project=project).delete()
    assert client.get(f"/api/v1/projects/{project.slug}/", headers=headers).status_code == 404


def test_keys_are_kept_only_as_hashes(project, owner):
    _token, key = token_issue(user=owner, projects=[project], issued_by=owner)
    stored = " ".join(str(value) for value in ApiToken.objects.values_list().get())
    assert key not in stored
    assert key[12:] not in stored


def test_a_revoked_or_unknown_key_is_refused_with_401(project, client, owner):
    token, key = token_issue(user=owner, projects=[project], issued_by=owner)
    token.revoked_at = token.created
    token.save(update_fields=["revoked_at"])
    for sent in (key, "cqa_made-up"):
        assert client.get("/api/v1/projects/", headers={"Authorization": f"Token {sent}"}).status_code == 401
