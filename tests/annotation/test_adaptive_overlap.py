"""Adaptive overlap: at least ``overlap`` judgments, more while the label is uncertain, at most ``overlap_max``."""

import pytest

from annotation.label_models import round_wanted
from annotation.models import CurationDecision, Item, Membership
from annotation.queue import assignment_next
from tests.annotation.helpers import judge
from tests.factories import ItemFactory, UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def team(project, annotators):
    extra = [UserFactory(username=f"annotator{n}") for n in (4, 5)]
    for user in extra:
        Membership.objects.create(user=user, project=project, role=Membership.Role.ANNOTATOR)
    return [*annotators, *extra]


def adaptive(project, *, threshold, overlap=2, overlap_max=4, aggregation="majority"):
    project.overlap, project.overlap_max, project.overlap_threshold = overlap, overlap_max, threshold
    project.aggregation = aggregation
    project.save()
    return project


def test_the_rule_wants_more_while_the_label_is_uncertain_and_stops_at_the_maximum(project):
    adaptive(project, threshold=0.9)
    assert round_wanted(judged=1, confidence=None, project=project) == 2
    assert round_wanted(judged=2, confidence=0.6, project=project) == 3
    assert round_wanted(judged=3, confidence=0.95, project=project) == 3
    assert round_wanted(judged=4, confidence=0.5, project=project) == 4
    project.overlap_max = None
    assert round_wanted(judged=2, confidence=0.1, project=project) == 2


def test_an_uncertain_item_is_served_again_and_its_round_stays_open(project, team):
    adaptive(project, threshold=0.9)
    item = ItemFactory(project=project)
    for annotator, label in zip(team[:2], ["associational", "interventional"], strict=True):
        judge(assignment_next(project=project, annotator=annotator), causal_class=label)
    item.refresh_from_db()
    assert (item.round_judged, item.round_wanted) == (2, 3)
    assert item.round_confidence < 0.9
    assert item.round_disagreement is None, "the round is not complete yet"
    third = assignment_next(project=project, annotator=team[2])
    assert third is not None and third.item_id == item.pk


def test_a_round_closes_when_the_label_is_sure_enough(project, team):
    adaptive(project, threshold=0.5)
    item = ItemFactory(project=project)
    for annotator in team[:2]:
        judge(assignment_next(project=project, annotator=annotator), causal_class="associational")
    item.refresh_from_db()
    assert (item.round_judged, item.round_wanted) == (2, 2)
    assert item.round_disagreement is not None, "the round is complete"
    assert assignment_next(project=project, annotator=team[2]) is None


@pytest.mark.parametrize("aggregation", ["majority", "dawid_skene", "mace"])
def test_a_closed_round_waits_for_a_curator_whatever_the_aggregation(project, team, aggregation):
    adaptive(project, threshold=0.5, aggregation=aggregation)
    item = ItemFactory(project=project)
    for annotator in team[:2]:
        judge(assignment_next(project=project, annotator=annotator), causal_class="associational")
    item.refresh_from_db()
    assert item.round_disagreement is not None, "the round is complete"
    assert item.status == Item.Status.IN_REVIEW, "no aggregation approves an item"
    assert not CurationDecision.objects.filter(item=item).exists()


def test_a_round_closes_at_the_maximum_however_unsure(project, team):
    adaptive(project, threshold=1.0, overlap_max=3)
    item = ItemFactory(project=project)
    for annotator, label in zip(team[:3], ["associational", "interventional", "counterfactual"], strict=True):
        judge(assignment_next(project=project, annotator=annotator), causal_class=label)
    item.refresh_from_db()
    assert (item.round_judged, item.round_wanted) == (3, 3)
    assert item.round_disagreement is not None
    assert assignment_next(project=project, annotator=team[3]) is None


def test_extra_judgments_go_to_the_least_certain_item_first(project, team):
    adaptive(project, threshold=0.99)
    sure, unsure = ItemFactory(project=project), ItemFactory(project=project)
    Item.objects.filter(pk=sure.pk).update(
        round_assigned=2, round_judged=2, round_wanted=3, round_confidence=0.8
    )
    Item.objects.filter(pk=unsure.pk).update(
        round_assigned=2, round_judged=2, round_wanted=3, round_confidence=0.4
    )
    assert assignment_next(project=project, annotator=team[0]).item_id == unsure.pk
    assert assignment_next(project=project, annotator=team[1]).item_id == sure.pk


def test_a_fixed_overlap_is_unchanged(project, team):
    item = ItemFactory(project=project)
    for annotator in team[:3]:
        judge(assignment_next(project=project, annotator=annotator), causal_class="associational")
    item.refresh_from_db()
    assert (item.round_judged, item.round_wanted, item.round_confidence) == (3, None, None)
    assert assignment_next(project=project, annotator=team[3]) is None
