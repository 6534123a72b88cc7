"""Nobody reviews their own answer while other work exists; when it happens it is marked and agreement
leaves it out by default."""

import pytest
from django.urls import reverse

from annotation.models import Item, Project
from annotation.queue import ANSWER, REVIEW, assignment_next, waiting_counts
from tests.annotation.helpers import judge
from tests.factories import ItemFactory

pytestmark = pytest.mark.django_db


def pending_question(project):
    return ItemFactory(
        project=project,
        status=Item.Status.PENDING,
        round=0,
        reference_answer="",
        answer_by=Item.AnswerBy.NOBODY,
        question="Por que o preço do feijão subiu em 2024?",
    )


def test_answering_others_comes_before_reviewing_ones_own_answer(project, annotator):
    own = ItemFactory(project=project, answer_author=annotator, question="Por que a dengue volta todo verão?")
    question = pending_question(project)
    first = assignment_next(project=project, annotator=annotator)
    assert first.item_id == question.pk, "the question waiting for an answer comes first"
    from annotation.judging import answer_submit

    answer_submit(
        assignment=first, answer="Porque a seca reduziu a colheita.", expected_version=question.version
    )
    assert assignment_next(project=project, annotator=annotator).item_id == own.pk, (
        "then, with nothing else, own"
    )


def test_a_started_review_of_ones_own_answer_waits_behind_fresh_work(project, annotators):
    author, other = annotators[0], annotators[1]
    own = ItemFactory(project=project, answer_author=author)
    assert assignment_next(project=project, annotator=other).item_id == own.pk  # started by someone else
    fresh = ItemFactory(project=project)
    assert assignment_next(project=project, annotator=author).item_id == fresh.pk


def test_a_project_may_forbid_self_review_altogether(project, annotator):
    Project.objects.filter(pk=project.pk).update(allow_self_review=False)
    project.refresh_from_db()
    ItemFactory(project=project, answer_author=annotator)
    assert assignment_next(project=project, annotator=annotator) is None
    assert assignment_next(project=project, annotator=annotator, kind=REVIEW) is None
    assert waiting_counts(annotator, [project])[project.pk] == {REVIEW: 0, ANSWER: 0}


def test_a_judgment_of_ones_own_answer_is_marked(project, annotators):
    own = ItemFactory(project=project, answer_author=annotators[0])
    mine = judge(assignment_next(project=project, annotator=annotators[0]))
    theirs = judge(assignment_next(project=project, annotator=annotators[1]))
    assert (mine.item_id, theirs.item_id) == (own.pk, own.pk)
    assert mine.own_answer is True
    assert theirs.own_answer is False


def test_agreement_leaves_own_answers_out_unless_asked(client_for, curator, project, annotators):
    from evaluation.selectors.agreement import project_agreement

    for _ in range(2):
        ItemFactory(project=project, answer_author=annotators[0])
    for annotator in annotators:
        for _ in range(2):
            assignment = assignment_next(project=project, annotator=annotator)
            if assignment is not None:
                judge(assignment)
    without = project_agreement(project, bootstrap=None)[0]
    with_own = project_agreement(project, bootstrap=None, include_own=True)[0]
    assert (without.n_judgments, with_own.n_judgments) == (4, 6)
    page = client_for(curator).get(
        reverse("evaluation:agreement", args=[project.slug]), {"include_own": "on"}
    )
    assert "6 judgments" in page.content.decode()
    page = client_for(curator).get(reverse("evaluation:agreement", args=[project.slug]))
    assert "4 judgments" in page.content.decode()
