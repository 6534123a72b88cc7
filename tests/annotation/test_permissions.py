"""Per-project permissions for each role, through the one helper pages and the API share."""

import pytest
from django.urls import reverse

from annotation.permissions import Role, has_role, project_role, projects_for_user
from tests.factories import ProjectFactory

pytestmark = pytest.mark.django_db


def test_roles_are_ordered(project, owner, curator, annotator, outsider):
    assert project_role(owner, project) == Role.OWNER
    assert has_role(owner, project, Role.CURATOR)
    assert has_role(curator, project, Role.CURATOR) and not has_role(curator, project, Role.OWNER)
    assert has_role(annotator, project, Role.ANNOTATOR) and not has_role(annotator, project, Role.CURATOR)
    assert project_role(outsider, project) is None and not has_role(outsider, project, Role.ANNOTATOR)


def test_users_see_only_their_projects(project, annotator, outsider):
    ProjectFactory(slug="other")
    assert list(projects_for_user(annotator)) == [project]
    assert list(projects_for_user(outsider)) == []


@pytest.mark.parametrize(
    ("who", "page", "status"),
    [
        ("annotator", "annotation:project_detail", 200),
        ("curator", "annotation:project_detail", 200),
        ("outsider", "annotation:project_detail", 404),
        ("annotator", "annotation:import_list", 403),
        ("curator", "annotation:import_list", 200),
        ("owner", "annotation:import_list", 200),
        ("outsider", "annotation:import_list", 404),
    ],
)
def test_pages_answer_each_role(request, project, client_for, who, page, status):
    client = client_for(request.getfixturevalue(who))
    assert client.get(reverse(page, args=[project.slug])).status_code == status


def test_anonymous_visitors_are_sent_to_sign_in(client, project):
    response = client.get(reverse("annotation:project_detail", args=[project.slug]))
    assert response.status_code == 302 and response["Location"].startswith(reverse("login"))


def test_the_home_page_lists_only_the_users_projects(project, client_for, outsider):
    ProjectFactory(slug="secret", name="Secret project")
    body = client_for(outsider).get(reverse("annotation:home")).content.decode()
    assert "Secret project" not in body and "Causal QA" not in body


def test_the_api_lists_only_the_callers_projects(project, client_for, annotator, outsider):
    ProjectFactory(slug="secret")
    listed = client_for(annotator).get("/api/v1/projects/").json()
    assert [p["slug"] for p in listed["results"]] == [project.slug]
    assert listed["results"][0]["role"] == "annotator"
    assert client_for(outsider).get(f"/api/v1/projects/{project.slug}/").status_code == 404


def test_the_api_refuses_anonymous_clients(client, project):
    assert client.get("/api/v1/projects/").status_code in (401, 403)
