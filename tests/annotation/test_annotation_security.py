"""Who may open which page (403 for members without the role, 404 for outsiders and other people's
assignments), escaping of every text people and models write, and CSRF on htmx requests."""

import re

import pytest
from django.test import Client
from django.urls import reverse

from annotation.judging import item_edit
from annotation.models import Item
from annotation.queue import assignment_next
from annotation.services import item_close
from tests.annotation.helpers import judge
from tests.factories import ItemFactory, OptionFactory, ProjectFactory

pytestmark = pytest.mark.django_db

PAYLOAD = '<script>alert("xss")</script>'
ESCAPED = "&lt;script&gt;alert(&quot;xss&quot;)&lt;/script&gt;"


def signed_in(user):
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def item(project):
    return ItemFactory(project=project)


CURATOR_PAGES = ["annotation:review_queue", "annotation:dashboard"]
CURATOR_ITEM_PAGES = ["annotation:item_review", "annotation:item_history"]
MEMBER_PAGES = ["annotation:queue", "annotation:guidelines", "annotation:revision_list"]


@pytest.mark.parametrize("page", CURATOR_PAGES)
@pytest.mark.parametrize(
    ("who", "status"), [("owner", 200), ("curator", 200), ("annotator", 403), ("outsider", 404)]
)
def test_curator_pages_answer_each_role(request, project, page, who, status):
    client = signed_in(request.getfixturevalue(who))
    assert client.get(reverse(page, args=[project.slug])).status_code == status


@pytest.mark.parametrize("page", CURATOR_ITEM_PAGES)
@pytest.mark.parametrize(
    ("who", "status"), [("owner", 200), ("curator", 200), ("annotator", 403), ("outsider", 404)]
)
def test_curator_item_pages_answer_each_role(request, project, item, page, who, status):
    client = signed_in(request.getfixturevalue(who))
    assert client.get(reverse(page, args=[project.slug, item.pk])).status_code == status


@pytest.mark.parametrize("page", MEMBER_PAGES)
@pytest.mark.parametrize(("who", "status"), [("curator", 200), ("annotator", 200), ("outsider", 404)])
def test_annotator_pages_answer_each_role(request, project, page, who, status):
    client = signed_in(request.getfixturevalue(who))
    assert client.get(reverse(page, args=[project.slug])).status_code == status


@pytest.mark.parametrize(("who", "status"), [("annotator", 403), ("outsider", 404)])
def test_only_curators_decide_and_approve_in_bulk(request, project, item, who, status):
    client = signed_in(request.getfixturevalue(who))
    decide = client.post(
        reverse("annotation:item_decide", args=[project.slug, item.pk]), {"decision": "approve"}
    )
    bulk = client.post(
        reverse("annotation:bulk_approve", args=[project.slug]),
        {"votes": "all_accept", "item_ids": str(item.pk)},
    )
    assert (decide.status_code, bulk.status_code) == (status, status)
    item.refresh_from_db()
    assert item.status == Item.Status.IN_REVIEW


def test_an_annotator_cannot_open_another_annotators_assignment(project, annotators, item, curator):
    theirs = assignment_next(project=project, annotator=annotators[0])
    url = reverse("annotation:assignment", args=[project.slug, theirs.pk])
    assert signed_in(annotators[1]).get(url).status_code == 404
    assert signed_in(curator).get(url).status_code == 404
    judge_url = reverse("annotation:assignment_judge", args=[project.slug, theirs.pk])
    assert signed_in(annotators[1]).post(judge_url, {"vote": "accept"}).status_code == 404


def test_items_of_another_project_are_not_found_through_this_one(project, curator):
    elsewhere = ItemFactory(project=ProjectFactory(slug="elsewhere"))
    client = signed_in(curator)
    assert client.get(reverse("annotation:item_review", args=[project.slug, elsewhere.pk])).status_code == 404
    assert (
        client.get(reverse("annotation:item_part", args=[project.slug, elsewhere.pk, "question"])).status_code
        == 404
    )
    assert client.get(reverse("annotation:item_review", args=["elsewhere", elsewhere.pk])).status_code == 404


def test_an_annotator_edits_only_items_they_hold_or_that_need_revision(project, annotators, curator, item):
    url = reverse("annotation:item_part", args=[project.slug, item.pk, "answer"])
    data = {"value": "Mudança.", "version": "1"}
    assert signed_in(annotators[0]).post(url, data).status_code == 403
    assignment_next(project=project, annotator=annotators[0])
    assert signed_in(annotators[0]).post(url, data).status_code == 200
    assert signed_in(annotators[1]).get(url + "?edit=1").status_code == 403
    assert signed_in(curator).get(url + "?edit=1").status_code == 200
    revise = reverse("annotation:item_revise", args=[project.slug, item.pk])
    assert signed_in(annotators[1]).get(revise).status_code == 403


def test_anonymous_visitors_are_sent_to_sign_in(client, project, item):
    for url in (
        reverse("annotation:queue", args=[project.slug]),
        reverse("annotation:review_queue", args=[project.slug]),
        reverse("annotation:item_part", args=[project.slug, item.pk, "answer"]),
    ):
        response = client.get(url)
        assert response.status_code == 302 and response["Location"].startswith(reverse("login"))


@pytest.fixture
def poisoned(project, annotators, curator):
    """An item whose question, answer, options and comments all carry a script payload, decided for revision."""
    item = ItemFactory(
        project=project,
        question=f"Por que {PAYLOAD}?",
        reference_answer=f"Porque {PAYLOAD}.",
        causal_class="associational",
    )
    OptionFactory(item=item, text=f"Opção {PAYLOAD}", rationale=f"Razão {PAYLOAD}", position=0)
    for annotator in annotators:
        assignment = assignment_next(project=project, annotator=annotator)
        if annotator == annotators[0]:
            item_edit(
                item=item, user=annotator, part="answer", values=f"Porque sim {PAYLOAD}.", base_version=1
            )
        judge(assignment, vote="needs_revision", comment=f"Comentário {PAYLOAD}")
    item.refresh_from_db()
    return item


def test_every_page_escapes_what_people_wrote(project, annotators, curator, poisoned):
    curator_client = signed_in(curator)
    pages = [
        curator_client.get(reverse("annotation:item_review", args=[project.slug, poisoned.pk])),
        curator_client.get(reverse("annotation:review_queue", args=[project.slug])),
        curator_client.get(
            reverse("annotation:review_queue", args=[project.slug]) + "?preview=1&votes=majority_accept"
        ),
        curator_client.get(reverse("annotation:item_history", args=[project.slug, poisoned.pk])),
        curator_client.get(reverse("annotation:dashboard", args=[project.slug])),
        curator_client.get(
            reverse("annotation:item_part", args=[project.slug, poisoned.pk, "options"]) + "?edit=1"
        ),
    ]
    item_close(item=poisoned, curator=curator, decision="revise", note=f"Nota {PAYLOAD}")
    pages += [
        curator_client.get(reverse("annotation:item_revise", args=[project.slug, poisoned.pk])),
        curator_client.get(reverse("annotation:revision_list", args=[project.slug])),
        signed_in(annotators[1]).get(reverse("annotation:item_revise", args=[project.slug, poisoned.pk])),
    ]
    for page in pages:
        body = page.content.decode()
        assert page.status_code == 200
        assert PAYLOAD not in body, page.request["PATH_INFO"]
    review = pages[0].content.decode()
    assert f"Comentário {ESCAPED}" in review and f"Opção {ESCAPED}" in review and f"Razão {ESCAPED}" in review
    assert ESCAPED in pages[3].content.decode()  # the history's diffs


def test_the_annotators_item_page_escapes_the_item(project, annotators):
    item = ItemFactory(project=project, question=f"Por que {PAYLOAD}?", reference_answer=f"Porque {PAYLOAD}.")
    OptionFactory(item=item, text=f"Opção {PAYLOAD}", rationale=f"Razão {PAYLOAD}", position=0)
    assignment = assignment_next(project=project, annotator=annotators[0])
    body = (
        signed_in(annotators[0])
        .get(reverse("annotation:assignment", args=[project.slug, assignment.pk]))
        .content
    )
    assert PAYLOAD not in body.decode() and body.decode().count(ESCAPED) >= 4


def test_htmx_edits_need_the_csrf_token_from_the_page(project, annotator, item):
    client = Client(enforce_csrf_checks=True)
    client.force_login(annotator)
    assignment = assignment_next(project=project, annotator=annotator)
    page = client.get(reverse("annotation:assignment", args=[project.slug, assignment.pk])).content.decode()
    token = re.search(r'hx-headers=\'\{"X-CSRFToken": "([^"]+)"\}\'', page).group(1)
    url = reverse("annotation:item_part", args=[project.slug, item.pk, "answer"])
    data = {"value": "Mudança.", "version": "1"}

    assert client.post(url, data, HTTP_HX_REQUEST="true").status_code == 403
    assert client.post(url, data, HTTP_HX_REQUEST="true", HTTP_X_CSRFTOKEN=token).status_code == 200
