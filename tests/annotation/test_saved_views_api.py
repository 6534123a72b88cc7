"""Saved views of the items page over REST: list, create and delete through the same service as the page."""

import json

import pytest
from django.http import QueryDict
from django.urls import reverse

from annotation.models import SavedItemView
from annotation.saved_views import saved_view_save
from tests.factories import api_token_key

pytestmark = pytest.mark.django_db


def views_url(project, *view_id):
    if view_id:
        return reverse("api-item-view-detail", args=[project.slug, *view_id])
    return reverse("api-item-view-list", args=[project.slug])


def call(client, user, method, path, body=None):
    return client.generic(
        method,
        path,
        data="" if body is None else json.dumps(body),
        content_type="application/json",
        headers={"Authorization": f"Token {api_token_key(user)}"},
    )


def test_a_curator_saves_a_view_and_opens_it_from_the_list(client, project, curator):
    response = call(
        client,
        curator,
        "POST",
        views_url(project),
        {
            "name": "Em revisão",
            "query": "status=in_review&sort=-updated_at&cols=question&cursor=abc",
            "shared": True,
        },
    )
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["name"] == "Em revisão" and body["shared"] is True and body["mine"] is True
    assert body["query"] == "status=in_review&sort=-updated_at&cols=question", "the cursor is never kept"
    assert body["url"].endswith(f"/p/{project.slug}/items/?status=in_review&sort=-updated_at&cols=question")
    listed = call(client, curator, "GET", views_url(project)).json()
    assert [view["name"] for view in listed] == ["Em revisão"]


def test_the_same_name_replaces_the_view_as_on_the_page(client, project, curator):
    call(client, curator, "POST", views_url(project), {"name": "Mine", "query": "status=draft"})
    call(client, curator, "POST", views_url(project), {"name": "Mine", "query": "status=approved"})
    view = SavedItemView.objects.get(project=project, owner=curator)
    assert view.query == "status=approved" and view.shared is False


def test_a_bad_filter_is_refused_naming_it(client, project, curator):
    response = call(client, curator, "POST", views_url(project), {"name": "Bad", "query": "round=abc"})
    assert response.status_code == 400
    assert "round" in response.json()["query"][0]
    blank = call(client, curator, "POST", views_url(project), {"name": "  ", "query": ""})
    assert blank.status_code == 400 and "name" in blank.json()
    assert not SavedItemView.objects.exists()


def test_the_list_holds_my_views_and_the_shared_ones_never_others_private_ones(
    client, project, curator, owner
):
    saved_view_save(project=project, user=owner, name="Owner's shared", params=QueryDict("q=x"), shared=True)
    saved_view_save(project=project, user=owner, name="Owner's own", params=QueryDict("q=y"), shared=False)
    saved_view_save(project=project, user=curator, name="Curator's", params=QueryDict(""), shared=False)
    listed = call(client, curator, "GET", views_url(project)).json()
    assert [(view["name"], view["owner"], view["mine"]) for view in listed] == [
        ("Curator's", "curator", True),
        ("Owner's shared", "owner", False),
    ]


def test_only_my_own_view_can_be_deleted(client, project, curator, owner):
    theirs = saved_view_save(project=project, user=owner, name="Shared", params=QueryDict(""), shared=True)
    mine = saved_view_save(project=project, user=curator, name="Mine", params=QueryDict(""), shared=False)
    assert call(client, curator, "DELETE", views_url(project, theirs.pk)).status_code == 404
    assert call(client, curator, "DELETE", views_url(project, mine.pk)).status_code == 204
    assert call(client, curator, "DELETE", views_url(project, mine.pk)).status_code == 404
    assert call(client, curator, "DELETE", views_url(project, 2**63)).status_code in (404,)
    assert list(SavedItemView.objects.values_list("name", flat=True)) == ["Shared"]


def test_annotators_have_no_saved_views_as_they_have_no_items_page(client, project, annotator):
    assert call(client, annotator, "GET", views_url(project)).status_code == 403
    response = call(client, annotator, "POST", views_url(project), {"name": "x", "query": ""})
    assert response.status_code == 403


def test_only_json_true_or_false_shares_a_view_and_only_text_names_it(client, project, curator):
    for body in (
        {"name": "x", "query": "", "shared": 0},
        {"name": "x", "query": "", "shared": "on"},
        {"name": 7, "query": ""},
        {"name": "x", "query": 3},
    ):
        assert call(client, curator, "POST", views_url(project), body).status_code == 400, body
    assert not SavedItemView.objects.exists()
