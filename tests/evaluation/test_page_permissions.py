"""Every evaluation page answers each role as the permission helper says: outsiders 404, missing role 403."""

import pytest
from django.urls import reverse

from evaluation.services import release_cut
from tests.evaluation.helpers import approved_items

pytestmark = pytest.mark.django_db

PAGES = {
    "agreement": ("evaluation:agreement", False),
    "releases": ("evaluation:release_list", False),
    "release": ("evaluation:release_detail", True),
    "download": ("evaluation:release_download", True),
    "api tokens": ("evaluation:api_tokens", False),
}
EXPECTED = {
    "outsider": {name: 404 for name in PAGES},
    "annotator": {"agreement": 403, "releases": 200, "release": 200, "download": 200, "api tokens": 403},
    "curator": {"agreement": 200, "releases": 200, "release": 200, "download": 200, "api tokens": 403},
    "owner": {name: 200 for name in PAGES},
}


def url(name, project):
    page, with_version = PAGES[name]
    return reverse(page, args=[project.slug, 1] if with_version else [project.slug])


@pytest.fixture
def released(project):
    approved_items(project, {"associational": 5})
    release_cut(project=project)
    return project


@pytest.mark.parametrize("who", list(EXPECTED))
def test_each_page_answers_the_role_as_expected(request, released, client_for, who):
    client = client_for(request.getfixturevalue(who))
    assert {name: client.get(url(name, released)).status_code for name in PAGES} == EXPECTED[who]


def test_anonymous_visitors_are_sent_to_sign_in_from_every_page(released, client):
    for name in PAGES:
        response = client.get(url(name, released))
        assert response.status_code == 302 and response["Location"].startswith(reverse("login")), name
    assert client.get(reverse("evaluation:my_api_token")).status_code == 302


def test_the_project_menu_links_the_pages_each_role_may_open(released, client_for, annotator, owner):
    annotator_menu = (
        client_for(annotator).get(reverse("annotation:project_detail", args=[released.slug])).content
    )
    assert b"/releases/" in annotator_menu and b"/agreement/" not in annotator_menu
    owner_menu = client_for(owner).get(reverse("annotation:project_detail", args=[released.slug])).content
    assert b"/agreement/" in owner_menu and b"/api-tokens/" in owner_menu
