"""Owners issue and revoke per-user API tokens from the project's API access page."""

import pytest
from django.urls import reverse
from rest_framework.authtoken.models import Token

from annotation.models import Membership
from tests.factories import ProjectFactory

pytestmark = pytest.mark.django_db


def issue(client, project, user):
    return client.post(reverse("evaluation:api_token_issue", args=[project.slug, user.pk]))


def test_an_owner_issues_a_token_that_authenticates_its_member(project, client_for, owner, annotator):
    client = client_for(owner)
    page = issue(client, project, annotator)
    token = Token.objects.get(user=annotator)
    assert token.key in page.content.decode()  # the annotator belongs to no project the owner does not own
    client.logout()
    response = client.get("/api/v1/projects/", headers={"Authorization": f"Token {token.key}"})
    assert response.status_code == 200 and response.json()["results"][0]["role"] == "annotator"


def test_issuing_again_replaces_the_old_token_and_revoking_ends_access(project, client_for, owner, annotator):
    client = client_for(owner)
    issue(client, project, annotator)
    old = Token.objects.get(user=annotator).key
    issue(client, project, annotator)
    new = Token.objects.get(user=annotator).key
    assert new != old
    client.post(reverse("evaluation:api_token_revoke", args=[project.slug, annotator.pk]))
    assert not Token.objects.filter(user=annotator).exists()
    client.logout()
    for key in (old, new):
        assert client.get("/api/v1/projects/", headers={"Authorization": f"Token {key}"}).status_code == 401


def test_an_owner_does_not_see_the_key_of_someone_who_works_in_other_projects(project, client_for, owner, curator):
    elsewhere = ProjectFactory(slug="elsewhere")
    Membership.objects.create(user=curator, project=elsewhere, role=Membership.Role.OWNER)
    page = issue(client_for(owner), project, curator)
    token = Token.objects.get(user=curator)
    assert page.status_code == 302 and token.key not in page.content.decode()
    mine = client_for(curator).get(reverse("evaluation:my_api_token")).content.decode()
    assert token.key in mine


@pytest.mark.parametrize(("who", "status"), [("curator", 403), ("annotator", 403), ("outsider", 404)])
def test_only_owners_manage_tokens(request, project, client_for, annotator, who, status):
    client = client_for(request.getfixturevalue(who))
    assert client.get(reverse("evaluation:api_tokens", args=[project.slug])).status_code == status
    assert issue(client, project, annotator).status_code == status
    assert not Token.objects.exists()


def test_tokens_are_issued_only_for_members_and_only_by_post(project, client_for, owner, outsider):
    client = client_for(owner)
    assert issue(client, project, outsider).status_code == 404
    assert client.get(reverse("evaluation:api_token_issue", args=[project.slug, owner.pk])).status_code == 405
