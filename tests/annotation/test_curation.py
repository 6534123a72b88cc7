"""Curator decisions close a round: approve into gold, reject, or revise (a signal, then a new round)."""

import pytest
from django.core.exceptions import ValidationError

from annotation.curation import ApprovalRule, bulk_approval_matches, item_return_to_review, items_bulk_approve
from annotation.judging import AssignmentClosed, item_edit
from annotation.models import Assignment, CurationDecision, Item
from annotation.queue import assignment_next
from annotation.services import DecisionRefused, item_close
from annotation.signals import revision_requested
from tests.annotation.helpers import judge
from tests.factories import ItemFactory

pytestmark = pytest.mark.django_db


def judged_item(
    project, annotators, votes=("accept", "accept", "accept"), rating=4, causal_class="associational"
):
    """An item whose round has all its judgments (one per annotator, in order)."""
    item = ItemFactory(project=project)
    for annotator, vote in zip(annotators, votes):
        assignment = assignment_next(project=project, annotator=annotator)
        assert assignment.item_id == item.pk
        judge(assignment, vote=vote, rating=rating, causal_class=causal_class)
    item.refresh_from_db()
    return item


@pytest.mark.parametrize(("decision", "status"), [("approve", "approved"), ("reject", "rejected")])
def test_approving_or_rejecting_closes_the_item(project, annotators, curator, decision, status):
    item = judged_item(project, annotators)
    made = item_close(item=item, curator=curator, decision=decision)
    item.refresh_from_db()
    assert item.status == status
    assert (made.round, made.curator, made.decision) == (1, curator, decision)


def test_revise_needs_a_note_and_moves_the_item_to_needs_revision(project, annotators, curator):
    item = judged_item(project, annotators, votes=("needs_revision",) * 3)
    with pytest.raises(ValidationError):
        item_close(item=item, curator=curator, decision="revise", note=" ")
    item_close(item=item, curator=curator, decision="revise", note="Explique o mecanismo.")
    item.refresh_from_db()
    assert item.status == Item.Status.NEEDS_REVISION


def test_revise_sends_revision_requested_only_after_the_transaction_commits(
    project, annotators, curator, django_capture_on_commit_callbacks
):
    item = judged_item(project, annotators)
    received = []

    def receiver(sender, item, decision, **kwargs):
        received.append((item.pk, decision.note))

    revision_requested.connect(receiver)
    try:
        with django_capture_on_commit_callbacks(execute=False) as callbacks:
            item_close(item=item, curator=curator, decision="revise", note="Mais curta.")
        assert received == []  # nothing before the commit
        for callback in callbacks:
            callback()
    finally:
        revision_requested.disconnect(receiver)
    assert received == [(item.pk, "Mais curta.")]


def test_a_round_is_decided_once(project, annotators, curator):
    item = judged_item(project, annotators)
    item_close(item=item, curator=curator, decision="approve")
    with pytest.raises(DecisionRefused):
        item_close(item=item, curator=curator, decision="reject")
    assert CurationDecision.objects.count() == 1


def test_a_decision_closes_the_open_assignments_of_the_round(project, annotators, curator):
    item = ItemFactory(project=project)
    open_one = assignment_next(project=project, annotator=annotators[0])
    item_close(item=item, curator=curator, decision="reject")
    open_one.refresh_from_db()
    assert open_one.status == Assignment.Status.EXPIRED
    with pytest.raises(AssignmentClosed):
        judge(open_one)


def test_after_a_revision_by_hand_the_item_starts_a_new_round_with_fresh_judgments(
    project, annotators, curator
):
    item = judged_item(project, annotators)
    item_close(item=item, curator=curator, decision="revise", note="Reescreva.")
    item_edit(
        item=item, user=annotators[0], part="answer", values="Resposta reescrita.", base_version=item.version
    )
    item_return_to_review(item=item)

    item.refresh_from_db()
    assert (item.status, item.round, item.round_assigned, item.round_judged) == (
        Item.Status.IN_REVIEW,
        2,
        0,
        0,
    )
    # The same annotators judge round 2 again.
    again = assignment_next(project=project, annotator=annotators[0])
    assert (again.item_id, again.round) == (item.pk, 2)


def test_only_an_item_needing_revision_goes_back_to_review(project, annotators, curator):
    item = judged_item(project, annotators)
    with pytest.raises(DecisionRefused):
        item_return_to_review(item=item)


def test_the_bulk_rule_takes_only_matching_complete_rounds(project, annotators, curator):
    clear = judged_item(project, annotators, rating=5)
    low = judged_item(project, annotators, rating=3)
    split = judged_item(project, annotators, votes=("accept", "accept", "reject"), rating=5)
    ItemFactory(project=project)  # not judged yet

    every_accept = ApprovalRule(votes="all_accept", min_mean_rating=4)
    assert [m.item.pk for m in bulk_approval_matches(project=project, rule=every_accept)] == [clear.pk]
    majority = ApprovalRule(votes="majority_accept", min_mean_rating=4)
    assert {m.item.pk for m in bulk_approval_matches(project=project, rule=majority)} == {clear.pk, split.pk}
    assert low.pk not in {m.item.pk for m in bulk_approval_matches(project=project, rule=majority)}


def test_bulk_approval_approves_what_was_previewed_and_still_matches(project, annotators, curator):
    first = judged_item(project, annotators, rating=5)
    second = judged_item(project, annotators, rating=5)
    rule = ApprovalRule(votes="all_accept", min_mean_rating=4)
    previewed = [m.item.pk for m in bulk_approval_matches(project=project, rule=rule)]
    late = judged_item(project, annotators, rating=5)  # matches, but was not in the preview
    item_close(item=second, curator=curator, decision="reject")  # decided after the preview

    result = items_bulk_approve(project=project, curator=curator, rule=rule, item_ids=previewed)

    assert result.approved == [first.pk] and result.no_longer_matching == [second.pk]
    statuses = dict(Item.objects.values_list("pk", "status"))
    assert (statuses[first.pk], statuses[second.pk], statuses[late.pk]) == (
        "approved",
        "rejected",
        "in_review",
    )
    assert "every vote is “accept”" in CurationDecision.objects.get(item=first).note


def test_the_rule_is_described_before_it_is_applied():
    rule = ApprovalRule(votes="all_accept", min_mean_rating=4, class_agreed=True)
    text = rule.describe()
    assert "every vote is “accept”" in text and "at least 4" in text and "class" in text
