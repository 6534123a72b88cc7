"""The queue hands out items by its rules: overlap, no repeats, breadth-first, expertise, topics, expiry."""

from datetime import timedelta

import pytest
from django.utils import timezone

from annotation.models import Assignment, Item, Membership
from annotation.queue import (
    ANSWER,
    REVIEW,
    assignment_next,
    assignment_skip,
    assignments_release_expired,
    waiting_counts,
)
from tests.annotation.helpers import judge
from tests.factories import ItemFactory, ProjectFactory, UserFactory
from topics.models import Topic

pytestmark = pytest.mark.django_db


def more_annotators(project, n):
    people = []
    for number in range(n):
        user = UserFactory(username=f"extra{number}")
        Membership.objects.create(user=user, project=project, role=Membership.Role.ANNOTATOR)
        people.append(user)
    return people


def finish(assignment):
    assignment.item.project.refresh_from_db()
    return judge(assignment)


def test_an_item_never_gets_more_assignments_than_the_overlap(project, annotators):
    item = ItemFactory(project=project)
    people = annotators + more_annotators(project, 2)
    handed = [assignment_next(project=project, annotator=person) for person in people]

    assert [a.item_id for a in handed[:3]] == [item.pk] * 3
    assert handed[3] is None and handed[4] is None
    item.refresh_from_db()
    assert item.round_assigned == 3


def test_nobody_gets_the_same_item_twice_in_a_round(project, annotator):
    first_item, second_item = ItemFactory(project=project), ItemFactory(project=project)
    first = assignment_next(project=project, annotator=annotator)
    finish(first)
    second = assignment_next(project=project, annotator=annotator)
    finish(second)

    assert {first.item_id, second.item_id} == {first_item.pk, second_item.pk}
    assert assignment_next(project=project, annotator=annotator) is None


def test_asking_again_returns_the_open_assignment_instead_of_a_new_one(project, annotator):
    ItemFactory(project=project)
    ItemFactory(project=project)
    first = assignment_next(project=project, annotator=annotator)
    again = assignment_next(project=project, annotator=annotator)
    assert again.pk == first.pk
    assert Assignment.objects.filter(annotator=annotator).count() == 1


def test_items_already_started_are_filled_before_fresh_ones(project, annotators):
    fresh_first = ItemFactory(project=project)
    started = ItemFactory(project=project)
    Assignment.objects.create(
        item=started, annotator=annotators[2], round=1, status=Assignment.Status.SUBMITTED
    )
    Item.objects.filter(pk=started.pk).update(round_assigned=1)

    handed = assignment_next(project=project, annotator=annotators[0])
    assert handed.item_id == started.pk  # though the fresh item has the lower id
    assert fresh_first.pk < started.pk


def test_the_fullest_started_item_comes_first(project, annotators):
    people = more_annotators(project, 3)
    one = ItemFactory(project=project)
    two = ItemFactory(project=project)
    for person in people[:1]:
        Assignment.objects.create(item=one, annotator=person, round=1, status=Assignment.Status.SUBMITTED)
    for person in people[1:3]:
        Assignment.objects.create(item=two, annotator=person, round=1, status=Assignment.Status.SUBMITTED)
    Item.objects.filter(pk=one.pk).update(round_assigned=1)
    Item.objects.filter(pk=two.pk).update(round_assigned=2)

    assert assignment_next(project=project, annotator=annotators[0]).item_id == two.pk


def test_rounds_complete_breadth_first_with_many_annotators(project, annotators):
    items = [ItemFactory(project=project) for _ in range(4)]
    people = annotators + more_annotators(project, 3)
    for person in people:
        finish(assignment_next(project=project, annotator=person))
    counts = sorted(Item.objects.filter(pk__in=[i.pk for i in items]).values_list("round_judged", flat=True))
    # Six judgments with overlap 3: two items complete, none started and left behind.
    assert counts == [0, 0, 3, 3]


def test_an_expert_starts_items_of_their_expertise_first(project, annotators):
    Membership.objects.filter(user=annotators[0], project=project).update(expertise=["animals"])
    ItemFactory(project=project)
    ItemFactory(project=project, metadata={"expertise": "technology"})
    animals = ItemFactory(project=project, metadata={"expertise": "animals"})

    assert assignment_next(project=project, annotator=annotators[0]).item_id == animals.pk


def test_without_matching_expertise_untagged_items_come_before_items_tagged_for_others(project, annotator):
    tech = ItemFactory(project=project, metadata={"expertise": "technology"})
    untagged = ItemFactory(project=project)

    assert assignment_next(project=project, annotator=annotator).item_id == untagged.pk
    finish(assignment_next(project=project, annotator=annotator))
    assert assignment_next(project=project, annotator=annotator).item_id == tech.pk


def test_an_item_an_expert_started_is_finished_by_anyone(project, annotators):
    Membership.objects.filter(user=annotators[0], project=project).update(expertise=["animals"])
    ItemFactory(project=project)
    animals = ItemFactory(project=project, metadata={"expertise": "animals"})
    finish(assignment_next(project=project, annotator=annotators[0]))

    # Breadth-first wins over expertise once an item is started, so rounds complete.
    assert assignment_next(project=project, annotator=annotators[1]).item_id == animals.pk


def test_only_selected_topics_are_served_when_a_project_selects_any(project, annotator):
    chosen = Topic.objects.create(project=project, label="Educação", selected=True)
    other = Topic.objects.create(project=project, label="Animais", selected=False)
    ItemFactory(project=project, topic=other)
    ItemFactory(project=project)  # no topic
    wanted = ItemFactory(project=project, topic=chosen)

    assert assignment_next(project=project, annotator=annotator).item_id == wanted.pk
    finish(assignment_next(project=project, annotator=annotator))
    assert assignment_next(project=project, annotator=annotator) is None
    assert waiting_counts(annotator, [project])[project.pk] == {REVIEW: 0, ANSWER: 0}


def test_without_selected_topics_every_topic_is_served(project, annotator):
    topic = Topic.objects.create(project=project, label="Educação", selected=False)
    item = ItemFactory(project=project, topic=topic)
    assert assignment_next(project=project, annotator=annotator).item_id == item.pk


def test_an_abandoned_assignment_returns_to_the_pool_after_the_timeout(project, annotators):
    project.overlap = 1
    project.assignment_timeout_minutes = 10
    project.save()
    item = ItemFactory(project=project)
    abandoned = assignment_next(project=project, annotator=annotators[0])
    assert assignment_next(project=project, annotator=annotators[1]) is None

    Assignment.objects.filter(pk=abandoned.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    taken_over = assignment_next(project=project, annotator=annotators[1])

    assert taken_over.item_id == item.pk
    abandoned.refresh_from_db()
    assert abandoned.status == Assignment.Status.EXPIRED
    # The one who abandoned it does not get it back in this round.
    assert assignment_next(project=project, annotator=annotators[0]) is None


def test_asking_for_an_item_in_any_project_releases_expired_assignments_of_every_project(project, annotators):
    other = ProjectFactory(slug="other-project", overlap=1)
    Membership.objects.create(user=annotators[0], project=other, role=Membership.Role.ANNOTATOR)
    elsewhere = ItemFactory(project=other)
    abandoned = assignment_next(project=other, annotator=annotators[0])
    Assignment.objects.filter(pk=abandoned.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    ItemFactory(project=project)

    assignment_next(project=project, annotator=annotators[1])

    abandoned.refresh_from_db()
    elsewhere.refresh_from_db()
    assert abandoned.status == Assignment.Status.EXPIRED
    assert elsewhere.round_assigned == 0


def test_an_assignment_expires_the_project_timeout_after_it_is_handed_out(project, annotator):
    project.assignment_timeout_minutes = 45
    project.save()
    ItemFactory(project=project)
    before = timezone.now()
    assignment = assignment_next(project=project, annotator=annotator)
    assert timedelta(minutes=44) < assignment.expires_at - before <= timedelta(minutes=45, seconds=5)


def test_releasing_expired_assignments_leaves_new_rounds_alone(project, annotator):
    item = ItemFactory(project=project)
    assignment = assignment_next(project=project, annotator=annotator)
    Item.objects.filter(pk=item.pk).update(round=2, round_assigned=0)  # a new round began meanwhile
    Assignment.objects.filter(pk=assignment.pk).update(expires_at=timezone.now() - timedelta(minutes=1))

    assert assignments_release_expired(project=project) == 1
    item.refresh_from_db()
    assert item.round_assigned == 0


def test_questions_without_an_answer_go_to_one_person_each(project, annotators):
    question = ItemFactory(
        project=project,
        status=Item.Status.PENDING,
        round=0,
        reference_answer="",
        answer_by=Item.AnswerBy.NOBODY,
    )
    first = assignment_next(project=project, annotator=annotators[0], kind=ANSWER)
    assert first.item_id == question.pk and first.round == 0
    assert assignment_next(project=project, annotator=annotators[1], kind=ANSWER) is None


def test_generated_questions_wait_for_a_model_not_for_people(project, annotator):
    ItemFactory(
        project=project,
        status=Item.Status.PENDING,
        round=0,
        reference_answer="",
        origin=Item.Origin.GENERATED,
    )
    assert assignment_next(project=project, annotator=annotator, kind=ANSWER) is None


def test_reviewing_comes_before_answering(project, annotator):
    ItemFactory(project=project, status=Item.Status.PENDING, round=0, reference_answer="")
    review = ItemFactory(project=project)
    assert assignment_next(project=project, annotator=annotator).item_id == review.pk


def test_a_skipped_question_goes_to_someone_else(project, annotators):
    question = ItemFactory(project=project, status=Item.Status.PENDING, round=0, reference_answer="")
    mine = assignment_next(project=project, annotator=annotators[0], kind=ANSWER)
    assignment_skip(assignment=mine, reason="Preciso de formação em veterinária.")

    mine.refresh_from_db()
    assert (mine.status, mine.skip_reason) == (
        Assignment.Status.SKIPPED,
        "Preciso de formação em veterinária.",
    )
    assert assignment_next(project=project, annotator=annotators[0], kind=ANSWER) is None
    assert assignment_next(project=project, annotator=annotators[1], kind=ANSWER).item_id == question.pk


def test_skipping_needs_a_reason(project, annotator):
    from django.core.exceptions import ValidationError

    ItemFactory(project=project, status=Item.Status.PENDING, round=0, reference_answer="")
    mine = assignment_next(project=project, annotator=annotator, kind=ANSWER)
    with pytest.raises(ValidationError):
        assignment_skip(assignment=mine, reason="   ")


def test_the_writer_of_an_answer_reviews_it_only_when_nothing_else_is_left(project, annotator):
    own = ItemFactory(project=project, answer_author=annotator)
    other = ItemFactory(project=project)
    assert assignment_next(project=project, annotator=annotator).item_id == other.pk
    finish(assignment_next(project=project, annotator=annotator))
    assert assignment_next(project=project, annotator=annotator).item_id == own.pk


def test_waiting_counts_match_what_the_queue_would_hand_out(project, annotators):
    ItemFactory(project=project)
    ItemFactory(project=project)
    ItemFactory(project=project, status=Item.Status.PENDING, round=0, reference_answer="")
    ItemFactory(project=project, status=Item.Status.APPROVED)
    finish(assignment_next(project=project, annotator=annotators[0]))

    assert waiting_counts(annotators[0], [project])[project.pk] == {REVIEW: 1, ANSWER: 1}
    assert waiting_counts(annotators[1], [project])[project.pk] == {REVIEW: 2, ANSWER: 1}


def test_releasing_expired_assignments_from_the_command_line(project, annotator, capsys):
    from django.core.management import call_command

    ItemFactory(project=project)
    assignment = assignment_next(project=project, annotator=annotator)
    Assignment.objects.filter(pk=assignment.pk).update(expires_at=timezone.now() - timedelta(minutes=1))
    call_command("release_expired_assignments", "--project", project.slug)
    assert "1 expired assignment(s) released" in capsys.readouterr().out
