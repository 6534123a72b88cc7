"""Blind: an annotator never sees anybody else's judgment — not in pages, the API or the HTML source."""

import pytest
from django.test import Client
from django.urls import reverse

from annotation.judging import item_edit
from annotation.queue import assignment_next
from annotation.services import item_close
from tests.annotation.helpers import judge
from tests.factories import ItemFactory

pytestmark = pytest.mark.django_db

SECRET = "COMENTARIO-SECRETO-DO-PRIMEIRO"


def signed_in(user):
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def judged_by_first(project, annotators):
    """An item the first annotator judged (with a telltale comment); the second holds it, not yet judged."""
    item = ItemFactory(project=project)
    judge(
        assignment_next(project=project, annotator=annotators[0]),
        vote="needs_revision",
        rating=1,
        causal_class="counterfactual",
        comment=SECRET,
    )
    second = assignment_next(project=project, annotator=annotators[1])
    assert second.item_id == item.pk
    return item, second


def test_the_item_page_and_its_source_hold_no_other_judgment(project, annotators, judged_by_first):
    item, second = judged_by_first
    client = signed_in(annotators[1])
    pages = [
        client.get(reverse("annotation:assignment", args=[project.slug, second.pk])),
        client.get(
            reverse("annotation:item_part", args=[project.slug, item.pk, "answer"]), HTTP_HX_REQUEST="true"
        ),
        client.get(reverse("annotation:queue", args=[project.slug])),
        client.get(reverse("annotation:home")),
    ]
    for page in pages:
        source = page.content.decode()
        assert page.status_code == 200
        assert SECRET not in source
        assert annotators[0].username not in source
    form = pages[0].content.decode()
    assert "checked" not in form.split('id="judgment-form"')[1]  # nothing pre-filled from another judgment


def test_still_blind_after_submitting(project, annotators, judged_by_first):
    item, second = judged_by_first
    judge(second, comment="Minha opinião.")
    source = (
        signed_in(annotators[1]).get(reverse("annotation:assignment", args=[project.slug, second.pk])).content
    )
    assert SECRET not in source.decode() and "Minha opinião." in source.decode()


def test_the_api_shows_an_annotator_only_their_own_judgments(project, annotators, curator, judged_by_first):
    item, second = judged_by_first
    url = reverse("api-item-judgments", args=[project.slug, item.pk])

    before = signed_in(annotators[1]).get(url)
    assert before.status_code == 200 and before.json()["results"] == []
    assert SECRET not in before.content.decode()
    judge(second, comment="Minha opinião.")
    after = signed_in(annotators[1]).get(url).json()["results"]
    assert [row["comment"] for row in after] == ["Minha opinião."]

    everything = signed_in(curator).get(url).json()["results"]
    assert {row["comment"] for row in everything} == {SECRET, "Minha opinião."}


def test_who_edited_the_answer_this_round_is_not_shown_to_other_annotators(project, annotators, curator):
    item = ItemFactory(project=project, reference_answer="Original.")
    first = assignment_next(project=project, annotator=annotators[0])
    second = assignment_next(project=project, annotator=annotators[1])
    item_edit(item=item, user=annotators[0], part="answer", values="Editada pela primeira.", base_version=1)

    source = (
        signed_in(annotators[1]).get(reverse("annotation:assignment", args=[project.slug, second.pk])).content
    )
    assert "Editada pela primeira." in source.decode()  # the item is shared ...
    assert annotators[0].username not in source.decode()  # ... who changed it is not
    assert first.pk


def test_annotators_revising_by_hand_see_the_curators_note_but_not_the_reviewers_comments(
    project, annotators, curator, judged_by_first
):
    item, second = judged_by_first
    judge(second, vote="needs_revision")
    judge(assignment_next(project=project, annotator=annotators[2]), vote="needs_revision")
    item_close(item=item, curator=curator, decision="revise", note="Explique o mecanismo causal.")
    url = reverse("annotation:item_revise", args=[project.slug, item.pk])

    as_annotator = signed_in(annotators[2]).get(url).content.decode()
    assert "Explique o mecanismo causal." in as_annotator and SECRET not in as_annotator
    assert SECRET in signed_in(curator).get(url).content.decode()
