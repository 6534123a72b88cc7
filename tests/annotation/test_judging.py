"""Judgments, answers and edits through the services every door shares."""

from datetime import timedelta

import pytest
from django.core.exceptions import ValidationError
from django.utils import timezone

from annotation.judging import AssignmentClosed, answer_submit, item_edit, judgment_submit
from annotation.models import Assignment, Item, Judgment, Revision
from annotation.queue import ANSWER, assignment_next
from annotation.services import Author, EditConflict, item_revise, item_start_round
from tests.annotation.helpers import judge
from tests.factories import ItemFactory, OptionFactory

pytestmark = pytest.mark.django_db


def test_a_judgment_is_stored_and_closes_the_assignment(project, annotator):
    item = ItemFactory(project=project)
    assignment = assignment_next(project=project, annotator=annotator)
    judgment = judge(assignment, rating=5, vote="accept", causal_class="interventional", comment="Boa.")

    assert judgment.ratings == {"adherence": 5, "fluency": 5, "coherence": 5, "relevance": 5}
    assert (judgment.vote, judgment.causal_class, judgment.round, judgment.edited) == (
        "accept",
        "interventional",
        1,
        False,
    )
    assignment.refresh_from_db()
    assert assignment.status == Assignment.Status.SUBMITTED and assignment.finished_at
    item.refresh_from_db()
    assert (item.round_assigned, item.round_judged, item.round_disagreement) == (1, 1, None)


def test_the_last_judgment_of_a_round_measures_its_disagreement(project, annotators):
    item = ItemFactory(project=project)
    votes = ["accept", "accept", "reject"]
    for annotator, vote in zip(annotators, votes):
        judge(assignment_next(project=project, annotator=annotator), vote=vote)
    item.refresh_from_db()
    # Votes: one agreeing pair of three (1/3 agreement); classes and ratings all agree.
    assert item.round_judged == 3
    assert item.round_disagreement == pytest.approx((1 - 1 / 3) / 3, abs=1e-4)


@pytest.mark.parametrize(
    ("ratings", "field"),
    [
        ({"adherence": 4, "fluency": 4, "coherence": 4}, "rating_relevance"),
        ({"adherence": 6, "fluency": 4, "coherence": 4, "relevance": 4}, "rating_adherence"),
        ({"adherence": "4.5", "fluency": 4, "coherence": 4, "relevance": 4}, "rating_adherence"),
        ({"adherence": 4, "fluency": 4, "coherence": 4, "relevance": 4, "beauty": 5}, "ratings"),
    ],
)
def test_ratings_must_cover_every_criterion_within_its_scale(project, annotator, ratings, field):
    ItemFactory(project=project)
    assignment = assignment_next(project=project, annotator=annotator)
    with pytest.raises(ValidationError) as error:
        judgment_submit(assignment=assignment, ratings=ratings, vote="accept", causal_class="associational")
    assert field in error.value.message_dict
    assert not Judgment.objects.exists()


def test_a_needs_revision_vote_needs_a_comment_and_the_class_must_be_the_projects(project, annotator):
    ItemFactory(project=project)
    assignment = assignment_next(project=project, annotator=annotator)
    ratings = {key: 3 for key in project.criterion_keys}
    with pytest.raises(ValidationError) as error:
        judgment_submit(assignment=assignment, ratings=ratings, vote="needs_revision", causal_class="causal")
    assert set(error.value.message_dict) == {"comment", "causal_class"}


def test_a_judgment_cannot_be_submitted_twice(project, annotator):
    ItemFactory(project=project)
    assignment = assignment_next(project=project, annotator=annotator)
    judge(assignment)
    with pytest.raises(AssignmentClosed):
        judge(assignment)
    assert Judgment.objects.count() == 1


def test_a_judgment_of_a_round_that_is_over_is_refused(project, annotator):
    item = ItemFactory(project=project)
    assignment = assignment_next(project=project, annotator=annotator)
    Item.objects.filter(pk=item.pk).update(status=Item.Status.NEEDS_REVISION)
    item_start_round(item=item)
    with pytest.raises(AssignmentClosed):
        judge(assignment)


def test_an_expired_assignment_can_still_be_submitted_while_its_place_is_free(project, annotator):
    item = ItemFactory(project=project)
    assignment = assignment_next(project=project, annotator=annotator)
    Assignment.objects.filter(pk=assignment.pk).update(expires_at=timezone.now() - timedelta(minutes=1))
    judge(assignment)
    item.refresh_from_db()
    assert (item.round_assigned, item.round_judged) == (1, 1)


def test_an_expired_assignment_whose_place_was_taken_is_refused(project, annotators):
    project.overlap = 1
    project.save()
    ItemFactory(project=project)
    late = assignment_next(project=project, annotator=annotators[0])
    Assignment.objects.filter(pk=late.pk).update(expires_at=timezone.now() - timedelta(minutes=1))
    judge(assignment_next(project=project, annotator=annotators[1]))  # took the place
    with pytest.raises(AssignmentClosed):
        judge(late)


def test_judgments_record_whether_the_annotator_edited_the_item(project, annotators):
    item = ItemFactory(project=project)
    editor = assignment_next(project=project, annotator=annotators[0])
    reader = assignment_next(project=project, annotator=annotators[1])
    item_edit(item=item, user=annotators[0], part="answer", values="Resposta melhor.", base_version=1)
    assert judge(editor).edited is True
    assert judge(reader).edited is False


def test_writing_an_answer_sends_the_question_to_review(project, annotator):
    question = ItemFactory(
        project=project,
        status=Item.Status.PENDING,
        round=0,
        reference_answer="",
        answer_by=Item.AnswerBy.NOBODY,
    )
    assignment = assignment_next(project=project, annotator=annotator, kind=ANSWER)
    answer_submit(assignment=assignment, answer="Porque o cachorro sente falta do dono.", expected_version=1)

    question.refresh_from_db()
    assert (question.status, question.round, question.round_assigned) == (Item.Status.IN_REVIEW, 1, 0)
    assert (question.answer_by, question.answer_author) == (Item.AnswerBy.HUMAN, annotator)
    assert question.revisions.get(number=2).kind == Revision.Kind.ANSWER
    assignment.refresh_from_db()
    assert assignment.status == Assignment.Status.SUBMITTED


def test_an_answer_written_over_someone_elses_is_a_conflict(project, annotator, curator):
    ItemFactory(project=project, status=Item.Status.PENDING, round=0, reference_answer="")
    assignment = assignment_next(project=project, annotator=annotator, kind=ANSWER)
    item_revise(
        item=assignment.item, changes={"question": "Pergunta corrigida?"}, author=Author(user=curator)
    )
    with pytest.raises(EditConflict):
        answer_submit(assignment=assignment, answer="Minha resposta.", expected_version=1)


def test_edits_of_different_parts_by_two_people_both_apply(project, annotators):
    item = ItemFactory(project=project, question="Pergunta?", reference_answer="Resposta.")
    item_edit(item=item, user=annotators[0], part="question", values="Pergunta melhor?", base_version=1)
    item_edit(item=item, user=annotators[1], part="answer", values="Resposta melhor.", base_version=1)

    item.refresh_from_db()
    assert (item.question, item.reference_answer, item.version) == ("Pergunta melhor?", "Resposta melhor.", 3)


def test_edits_of_the_same_part_by_two_people_conflict_and_keep_the_first(project, annotators):
    item = ItemFactory(project=project, reference_answer="Resposta.")
    item_edit(item=item, user=annotators[0], part="answer", values="Primeira.", base_version=1)
    with pytest.raises(EditConflict) as conflict:
        item_edit(item=item, user=annotators[1], part="answer", values="Segunda.", base_version=1)
    assert conflict.value.current.reference_answer == "Primeira."
    # Merged and saved again against the version now seen, the second edit goes through.
    item_edit(
        item=item,
        user=annotators[1],
        part="answer",
        values="Primeira e segunda.",
        base_version=conflict.value.current.version,
    )
    item.refresh_from_db()
    assert item.reference_answer == "Primeira e segunda."


def test_options_are_edited_as_one_part(project, annotator):
    item = ItemFactory(project=project)
    OptionFactory(item=item, text="Certa", role="correct", position=0)
    OptionFactory(item=item, text="Errada", role="unfounded", position=1)
    options = [
        {"text": "Certa", "role": "correct", "rationale": ""},
        {"text": "Invertida", "role": "reversal", "rationale": "troca causa e efeito"},
    ]
    item_edit(item=item, user=annotator, part="options", values=options, base_version=1)
    assert list(item.options.values_list("text", "role", "rationale")) == [
        ("Certa", "correct", ""),
        ("Invertida", "reversal", "troca causa e efeito"),
    ]
