"""Every change to an item bumps its version and appends a revision; stale saves are refused."""

import pytest

from annotation.models import Item, Revision
from annotation.services import Author, EditConflict, item_revise, item_start_round
from tests.factories import ItemFactory, OptionFactory

pytestmark = pytest.mark.django_db


def test_an_edit_records_the_item_before_and_after(project, annotator):
    item = ItemFactory(project=project, reference_answer="Antes.")
    saved = item_revise(
        item=item, changes={"reference_answer": "Depois."}, author=Author(user=annotator), expected_version=1
    )

    assert saved.version == 2
    first, second = Revision.objects.filter(item=item).order_by("number")
    assert (first.number, first.kind, first.snapshot["reference_answer"]) == (1, "created", "Antes.")
    assert (second.number, second.author, second.changed_fields) == (2, annotator, ["reference_answer"])
    assert second.snapshot["reference_answer"] == "Depois."
    saved.refresh_from_db()
    assert (saved.answer_by, saved.answer_author) == (Item.AnswerBy.HUMAN, annotator)


def test_a_save_based_on_an_old_version_is_refused_and_changes_nothing(project, annotators):
    item = ItemFactory(project=project, question="Original?")
    item_revise(
        item=item,
        changes={"question": "Primeira edição?"},
        author=Author(user=annotators[0]),
        expected_version=1,
    )

    with pytest.raises(EditConflict) as conflict:
        item_revise(
            item=item,
            changes={"question": "Segunda edição?"},
            author=Author(user=annotators[1]),
            expected_version=1,
        )

    assert conflict.value.current.question == "Primeira edição?"
    assert conflict.value.current.version == 2
    item.refresh_from_db()
    assert item.question == "Primeira edição?"


def test_a_model_answer_is_marked_with_its_call(project):
    item = ItemFactory(project=project, reference_answer="")
    author = Author(llm_call_id=42, provenance={"model": "llama-70b", "template": "answer/class-agnostic v1"})
    item_revise(
        item=item,
        changes={"reference_answer": "Resposta do modelo."},
        author=author,
        kind=Revision.Kind.MODEL,
    )

    item.refresh_from_db()
    assert item.answer_by == Item.AnswerBy.MODEL and item.answer_provenance["model"] == "llama-70b"
    revision = item.revisions.get(number=2)
    assert revision.llm_call_id == 42 and revision.kind == "model"


def test_options_are_replaced_and_recorded(project, annotator):
    item = ItemFactory(project=project)
    OptionFactory(item=item, text="Certa", role="correct", position=0)
    OptionFactory(item=item, text="Errada", role="contradictory", position=1)
    options = [
        {"text": "Certa", "role": "correct"},
        {"text": "Errada, mas melhor", "role": "unfounded", "rationale": "r"},
    ]
    item_revise(item=item, changes={}, options=options, author=Author(user=annotator))

    assert list(item.options.values_list("text", "role", "position")) == [
        ("Certa", "correct", 0),
        ("Errada, mas melhor", "unfounded", 1),
    ]
    assert item.revisions.get(number=2).changed_fields == ["options"]


def test_saving_without_changes_writes_no_revision(project, annotator):
    item = ItemFactory(project=project, question="Igual?")
    saved = item_revise(item=item, changes={"question": "Igual?"}, author=Author(user=annotator))
    assert saved.version == 1
    assert not item.revisions.filter(kind="edit").exists()


def test_a_new_round_sends_the_item_back_to_review(project):
    item = ItemFactory(project=project, status=Item.Status.NEEDS_REVISION, round=1)
    item_start_round(item=item)
    assert (item.status, item.round) == (Item.Status.IN_REVIEW, 2)


def test_many_items_updated_at_once_get_the_same_versions_and_revisions_as_one_by_one(
    project, annotator, django_assert_max_num_queries
):
    from annotation.services import ItemChange, items_revise

    items = [ItemFactory(project=project, reference_answer="", answer_by="") for _ in range(20)]
    OptionFactory(item=items[0], text="Certa", role="correct", position=0)
    edited = ItemFactory(project=project, reference_answer="Antes.")
    item_revise(item=edited, changes={"question": "Editada?"}, author=Author(user=annotator))
    author = Author(llm_call_id=7, provenance={"model": "m", "call_id": 7})
    changes = [
        ItemChange(item.pk, {"reference_answer": f"Resposta {n}."}, author, note="lote")
        for n, item in enumerate([*items, edited])
    ]
    changes.append(
        ItemChange(items[1].pk, {"reference_answer": "Resposta 1."}, author)
    )  # no change: no revision

    with django_assert_max_num_queries(8):
        changed, left_alone = items_revise(changes=changes, kind=Revision.Kind.MODEL, start_round=True)

    assert len(changed) == 21 and left_alone == {}
    for n, item in enumerate(items):
        item.refresh_from_db()
        assert (item.version, item.reference_answer, item.answer_by) == (
            2,
            f"Resposta {n}.",
            Item.AnswerBy.MODEL,
        )
        assert item.answer_provenance == {"model": "m", "call_id": 7} and item.round == 2
        first, second = item.revisions.order_by("number")
        assert (first.kind, first.snapshot["reference_answer"]) == ("created", "")
        assert (second.number, second.kind, second.llm_call_id, second.note) == (2, "model", 7, "lote")
        assert second.round == 1  # written in round 1, which then ended
        assert (
            second.changed_fields == ["reference_answer"]
            and second.snapshot["reference_answer"] == f"Resposta {n}."
        )
    assert items[0].revisions.get(number=2).snapshot["options"][0]["text"] == "Certa"
    edited.refresh_from_db()
    assert edited.version == 3 and edited.revisions.count() == 3


def test_items_in_other_statuses_are_left_alone_when_asked(project):
    from annotation.services import ItemChange, items_revise

    waiting = ItemFactory(project=project, status=Item.Status.PENDING, reference_answer="")
    approved = ItemFactory(project=project, status=Item.Status.APPROVED, reference_answer="Ouro.")
    author = Author(llm_call_id=1, provenance={})
    changes = [
        ItemChange(pk, {"reference_answer": "Nova."}, author) for pk in (waiting.pk, approved.pk, 999999)
    ]

    changed, left_alone = items_revise(changes=changes, only_if_status=(Item.Status.PENDING,))

    assert [item.pk for item in changed] == [waiting.pk]
    assert left_alone == {approved.pk: Item.Status.APPROVED, 999999: None}
    approved.refresh_from_db()
    assert approved.reference_answer == "Ouro." and approved.version == 1


def test_a_model_answer_to_an_item_sent_back_starts_a_fresh_round_not_a_complete_one(project):
    """Not stranded: an item sent back for revision after a full round with disagreement, then answered
    by a model through the batch path, must come back to review with empty round counters, as ``item_start_round``
    leaves them, so the queue assigns it again and the curator's queue shows no old disagreement."""
    from annotation.services import ItemChange, items_revise

    def sent_back():
        return ItemFactory(
            project=project,
            status=Item.Status.NEEDS_REVISION,
            round=1,
            reference_answer="Antes.",
            round_assigned=3,
            round_judged=3,
            round_disagreement=0.67,
        )

    by_batch, one_by_one = sent_back(), sent_back()
    author = Author(llm_call_id=3, provenance={"model": "m", "call_id": 3})

    items_revise(
        changes=[ItemChange(by_batch.pk, {"reference_answer": "Depois."}, author)],
        kind=Revision.Kind.MODEL,
        only_if_status=(Item.Status.NEEDS_REVISION,),
        start_round=True,
    )
    item_start_round(
        item=item_revise(
            item=one_by_one, changes={"reference_answer": "Depois."}, author=author, kind=Revision.Kind.MODEL
        )
    )

    counters = ("status", "round", "round_assigned", "round_judged", "round_disagreement", "reference_answer")
    by_batch.refresh_from_db()
    one_by_one.refresh_from_db()
    assert [getattr(by_batch, name) for name in counters] == [Item.Status.IN_REVIEW, 2, 0, 0, None, "Depois."]
    assert [getattr(by_batch, name) for name in counters] == [getattr(one_by_one, name) for name in counters]


def test_an_item_answered_by_a_model_after_revision_is_assigned_for_review_again(project, annotators):
    from annotation.queue import assignment_next
    from annotation.services import ItemChange, items_revise

    item = ItemFactory(
        project=project,
        status=Item.Status.NEEDS_REVISION,
        round=1,
        reference_answer="Antes.",
        round_assigned=project.overlap,
        round_judged=project.overlap,
        round_disagreement=1.0,
    )
    items_revise(
        changes=[ItemChange(item.pk, {"reference_answer": "Depois."}, Author(llm_call_id=4, provenance={}))],
        kind=Revision.Kind.MODEL,
        start_round=True,
    )

    assignment = assignment_next(project=project, annotator=annotators[0])
    assert assignment is not None and (assignment.item_id, assignment.round) == (item.pk, 2)
