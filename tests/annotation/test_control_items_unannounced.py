"""A control item is served unannounced through every door: what an annotator reads of it (the item page, the
API's assignments, judgment and items, the counts by status) is what they read of an ordinary item awaiting
judgment, but for its id and text; curators see it as it is."""

import re

import pytest
from django.test import Client
from django.urls import reverse

from annotation.control_items import item_mark_control
from annotation.models import Item
from annotation.queue import control_assignment_new
from annotation.selectors import projects_overview
from annotation.services import items_close
from tests.factories import ItemFactory

pytestmark = pytest.mark.django_db

VARYING = {"id", "external_id", "question", "created_at", "updated_at", "item", "annotator"}


@pytest.fixture
def pair(project, curator):
    """An ordinary item awaiting judgment and a control item, alike but for their id and text."""
    ordinary = ItemFactory(
        project=project, question="Por que a chuva molha a rua?", causal_class="interventional"
    )
    control = ItemFactory(
        project=project, question="Por que o sol seca a roupa?", causal_class="interventional"
    )
    items_close(item_ids=[control.pk], curator=curator, note="")
    Item.objects.filter(pk=control.pk).update(round_assigned=3, round_judged=3)  # its round, decided
    control.refresh_from_db()
    item_mark_control(item=control)
    return ordinary, control


def client_of(user):
    client = Client()
    client.force_login(user)
    return client


def served(client, project):
    response = client.post(
        f"/api/v1/projects/{project.slug}/assignments/next/", {}, content_type="application/json"
    )
    assert response.status_code == 200, response.content
    return response.json()


def without_identity(data: dict) -> dict:
    return {key: value for key, value in data.items() if key not in VARYING}


def page_without_identity(html: str, item: Item, assignment_id: int) -> str:
    html = html.replace(item.question, "QUESTION")
    html = re.sub(rf"items/{item.pk}/", "items/ITEM/", html)
    html = re.sub(rf"assignments/{assignment_id}/", "assignments/ASSIGNMENT/", html)
    html = re.sub(rf"#{item.pk}\b", "#ITEM", html)
    html = re.sub(r"annotator\d", "ANNOTATOR", html)
    html = re.sub(r'"X-CSRFToken": "[^"]*"', "", html)
    return re.sub(r'name="csrfmiddlewaretoken" value="[^"]*"', "", html)


def test_an_annotator_reads_a_control_item_as_an_ordinary_item_awaiting_judgment(project, annotators, pair):
    ordinary, control = pair
    first, second = (client_of(annotator) for annotator in annotators[:2])
    control_assignment_new(project=project, annotator=annotators[0])  # the queue's draw, made certain
    of_control, of_ordinary = served(first, project), served(second, project)
    assert (of_control["item"]["id"], of_ordinary["item"]["id"]) == (control.pk, ordinary.pk)
    assert of_control["item"]["status"] == "in_review"
    assert without_identity(of_control) == without_identity(of_ordinary)
    assert without_identity(of_control["item"]) == without_identity(of_ordinary["item"])

    pages = [
        page_without_identity(
            client.get(reverse("annotation:assignment", args=[project.slug, data["id"]])).content.decode(),
            item,
            data["id"],
        )
        for client, data, item in ((first, of_control, control), (second, of_ordinary, ordinary))
    ]
    assert pages[0] == pages[1]

    judged = []
    for client, data in ((first, of_control), (second, of_ordinary)):
        response = client.post(
            f"/api/v1/projects/{project.slug}/assignments/{data['id']}/judgment/",
            {
                "ratings": {key: 4 for key in project.criterion_keys},
                "vote": "accept",
                "causal_class": "interventional",
            },
            content_type="application/json",
        )
        assert response.status_code == 201, response.content
        changed = client.put(
            f"/api/v1/projects/{project.slug}/assignments/{data['id']}/judgment/",
            {
                "ratings": {key: 3 for key in project.criterion_keys},
                "vote": "reject",
                "causal_class": "associational",
                "comment": "Vaga.",
            },
            content_type="application/json",
        )
        assert changed.status_code == 200, changed.content
        again = client.get(f"/api/v1/projects/{project.slug}/assignments/{data['id']}/").json()
        judged.append(
            (
                without_identity(response.json()),
                without_identity(changed.json()),
                without_identity(again["item"]),
            )
        )
    assert judged[0] == judged[1]
    control.refresh_from_db()
    assert (control.status, control.round_disagreement) == (Item.Status.APPROVED, None), "the decision stays"


def test_the_items_list_and_its_counts_show_an_annotator_a_control_item_in_review(
    project, annotators, curator, pair
):
    ordinary, control = pair
    annotator = client_of(annotators[0])
    listed = annotator.get(f"/api/v1/projects/{project.slug}/items/").json()["results"]
    by_id = {item["id"]: item for item in listed}
    assert without_identity(by_id[control.pk]) == without_identity(by_id[ordinary.pk])
    in_review = annotator.get(f"/api/v1/projects/{project.slug}/items/", {"status": "in_review"}).json()
    assert {item["id"] for item in in_review["results"]} == {ordinary.pk, control.pk}
    approved = annotator.get(f"/api/v1/projects/{project.slug}/items/", {"status": "approved"}).json()
    assert approved["results"] == []
    counts = annotator.get(f"/api/v1/projects/{project.slug}/").json()["item_counts"]
    assert counts.get("approved", 0) == 0 and counts["in_review"] == 2
    for user, gold, in_review in ((annotators[0], 0, 2), (curator, 1, 1)):
        page = client_of(user).get(reverse("annotation:project_detail", args=[project.slug])).context
        statuses = {row["status"]: row["count"] for row in page["status_counts"]}
        assert (statuses["approved"], statuses["in_review"]) == (gold, in_review), user
        interventional = next(row for row in page["class_rows"] if row["key"] == "interventional")
        assert interventional["gold"] == gold, user
        assert next(row for row in page["funnel"] if row["key"] == "interventional")["gold"] == gold, user
        overview = projects_overview(user).get(pk=project.pk)
        assert (overview.n_gold, overview.n_in_review) == (gold, in_review), user

    truth = client_of(curator)
    listed = truth.get(f"/api/v1/projects/{project.slug}/items/", {"status": "approved"}).json()["results"]
    assert [item["id"] for item in listed] == [control.pk]
    assert listed[0]["status"] == "approved"
    assert truth.get(f"/api/v1/projects/{project.slug}/").json()["item_counts"]["approved"] == 1
