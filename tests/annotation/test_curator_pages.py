"""The curator's pages: review queue, an item's judgments side by side, decisions, bulk approval,
history and the dashboard."""

import re

import pytest
from django.test import Client
from django.urls import reverse

from annotation.judging import item_edit
from annotation.models import Item, Revision
from annotation.queue import assignment_next
from annotation.services import Author, item_close, item_revise
from tests.annotation.helpers import judge
from tests.factories import ItemFactory

pytestmark = pytest.mark.django_db


def signed_in(user):
    client = Client()
    client.force_login(user)
    return client


def judged_item(
    project, annotators, votes, ratings=(4, 4, 4), classes=("associational",) * 3, comments=None, **kw
):
    item = ItemFactory(project=project, **kw)
    comments = comments or [""] * 3
    for annotator, vote, rating, causal_class, comment in zip(annotators, votes, ratings, classes, comments):
        assignment = assignment_next(project=project, annotator=annotator)
        assert assignment.item_id == item.pk
        judge(assignment, vote=vote, rating=rating, causal_class=causal_class, comment=comment)
    return item


def test_the_review_queue_puts_the_most_disputed_items_first(project, annotators, curator):
    calm = judged_item(project, annotators, ["accept"] * 3, question="Pergunta calma?")
    disputed = judged_item(
        project,
        annotators,
        ["accept", "reject", "needs_revision"],
        ratings=(5, 1, 3),
        classes=("associational", "interventional", "counterfactual"),
        question="Pergunta disputada?",
    )
    ItemFactory(project=project, question="Ainda sem julgamentos?")

    body = signed_in(curator).get(reverse("annotation:review_queue", args=[project.slug])).content.decode()

    assert body.index("Pergunta disputada?") < body.index("Pergunta calma?")
    assert "Ainda sem julgamentos?" not in body
    assert calm.pk and disputed.pk


def test_the_item_review_shows_the_judgments_side_by_side(project, annotators, curator):
    item = ItemFactory(project=project, reference_answer="Porque o preço subiu.")
    assignments = [assignment_next(project=project, annotator=annotator) for annotator in annotators]
    item_edit(
        item=item, user=annotators[1], part="answer", values="Porque o preço da ração subiu.", base_version=1
    )
    for assignment, vote, rating, comment in zip(
        assignments,
        ["accept", "accept", "reject"],
        [5, 4, 2],
        ["Ótima.", "Corrigi a resposta.", "Falta o mecanismo."],
    ):
        judge(assignment, vote=vote, rating=rating, comment=comment)

    body = (
        signed_in(curator)
        .get(reverse("annotation:item_review", args=[project.slug, item.pk]))
        .content.decode()
    )

    for annotator in annotators:
        assert annotator.username in body
    for text in ("Ótima.", "Corrigi a resposta.", "Falta o mecanismo.", "<ins>da ração </ins>", "33%"):
        assert text in body, text
    assert re.search(r'id="majority-vote">\s*Accept', body)
    assert "mean 3.7" in body  # (5 + 4 + 2) / 3


def test_a_decision_from_the_page_moves_on_to_the_next_disputed_item(project, annotators, curator):
    first = judged_item(project, annotators, ["accept", "reject", "accept"])
    second = judged_item(project, annotators, ["accept"] * 3)
    client = signed_in(curator)

    response = client.post(
        reverse("annotation:item_decide", args=[project.slug, first.pk]), {"decision": "approve"}
    )

    assert response.status_code == 302
    assert response["Location"] == reverse("annotation:item_review", args=[project.slug, second.pk])
    first.refresh_from_db()
    assert first.status == Item.Status.APPROVED


def test_revise_from_the_page_requires_a_note(project, annotators, curator):
    item = judged_item(project, annotators, ["needs_revision"] * 3)
    client = signed_in(curator)
    refused = client.post(
        reverse("annotation:item_decide", args=[project.slug, item.pk]), {"decision": "revise"}
    )
    assert refused.status_code == 400 and "Say what should be revised." in refused.content.decode()
    client.post(
        reverse("annotation:item_decide", args=[project.slug, item.pk]),
        {"decision": "revise", "note": "Cite a causa."},
    )
    item.refresh_from_db()
    assert item.status == Item.Status.NEEDS_REVISION


def test_bulk_approval_shows_the_rule_and_its_items_before_applying(project, annotators, curator):
    good = judged_item(project, annotators, ["accept"] * 3, ratings=(5, 4, 5), question="Boa pergunta?")
    judged_item(project, annotators, ["accept"] * 3, ratings=(3, 3, 3), question="Pergunta fraca?")
    client = signed_in(curator)

    preview = client.get(
        reverse("annotation:review_queue", args=[project.slug]),
        {"preview": "1", "votes": "all_accept", "min_mean_rating": "4"},
    ).content.decode()
    section = preview.split('id="bulk-preview"')[1].split("</form>")[0]
    assert "every vote is “accept”" in section and "at least 4" in section
    assert "1 item matches." in section and "Boa pergunta?" in section and "Pergunta fraca?" not in section
    item_ids = re.search(r'name="item_ids" value="([^"]*)"', section).group(1)
    assert item_ids == str(good.pk)

    client.post(
        reverse("annotation:bulk_approve", args=[project.slug]),
        {"votes": "all_accept", "min_mean_rating": "4.0", "item_ids": item_ids},
    )
    assert list(Item.objects.filter(status=Item.Status.APPROVED).values_list("pk", flat=True)) == [good.pk]


def test_the_history_shows_every_revision_with_who_made_it_and_the_decisions(project, annotators, curator):
    item = ItemFactory(project=project, reference_answer="Primeira resposta.")
    assignment = assignment_next(project=project, annotator=annotators[0])
    item_edit(item=item, user=annotators[0], part="answer", values="Segunda resposta.", base_version=1)
    judge(assignment)
    for annotator in annotators[1:]:
        judge(assignment_next(project=project, annotator=annotator))
    item_close(item=item, curator=curator, decision="revise", note="Seja mais específica.")
    item_revise(
        item=item,
        changes={"reference_answer": "Resposta do modelo."},
        kind=Revision.Kind.MODEL,
        author=Author(llm_call_id=321, provenance={"model": "qwen-72b", "template": "revision v2"}),
    )

    body = (
        signed_in(curator)
        .get(reverse("annotation:item_history", args=[project.slug, item.pk]))
        .content.decode()
    )

    assert body.index("Revision 1") < body.index("Revision 2") < body.index("Revision 3")
    assert annotators[0].username in body and "<del>Primeira</del><ins>Segunda</ins>" in body
    assert "/generation/calls/321/" in body and "qwen-72b" in body
    assert "Seja mais específica." in body and "Revise" in body
    assert "3 judgments" in body


def test_the_dashboard_plots_status_class_balance_and_annotators(project, annotators, curator):
    project.class_targets = {"associational": 10, "interventional": 5}
    project.save()
    judged_item(project, annotators, ["accept", "accept", "reject"])
    ItemFactory(project=project, causal_class="interventional", status=Item.Status.APPROVED)

    body = signed_in(curator).get(reverse("annotation:dashboard", args=[project.slug])).content.decode()

    assert body.count("<svg") >= 4
    assert 'class="marker"' in body  # the class targets
    table = body.split('id="annotator-table"')[1]
    for annotator in annotators:
        assert annotator.username in table
    # Two of the three voted with the majority ("accept"): 100% for them, 0% for the third.
    assert table.count("100%") >= 2 and "0%" in table


def test_the_demo_gives_every_annotator_work_and_the_curator_a_review_queue(client):
    from annotation.demo import demo_load
    from annotation.queue import waiting_counts

    project = demo_load().project
    from django.contrib.auth import get_user_model

    for username in ("annotator1", "annotator2", "annotator3"):
        user = get_user_model().objects.get(username=username)
        waiting = waiting_counts(user, [project])[project.pk]
        assert waiting["review"] >= 1 and waiting["answer"] >= 1, username
    assert client.login(username="curator", password="curator")
    body = client.get(reverse("annotation:review_queue", args=[project.slug])).content.decode()
    assert "No item has all its judgments yet." not in body
