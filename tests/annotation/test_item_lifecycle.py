"""One item lifecycle: every way of creating an item gives the same item and first revision for the same
input, the batch paths equal the one-item paths, and every way of closing an item records a decision."""

import pytest

from annotation.importing import questions_import
from annotation.models import Assignment, CurationDecision, ImportBatch, Item, ItemGroup, Judgment, Revision
from annotation.services import (
    A_MODEL,
    NOBODY,
    Author,
    NewItem,
    item_close,
    item_create,
    item_revise,
    items_close,
    items_create,
    items_create_fast,
)
from tests.factories import ItemFactory, ProjectFactory

pytestmark = pytest.mark.django_db

Decision = CurationDecision.Decision
# Fields that differ between two items made alike: who they are, where, and when.
NOT_COMPARED = {"id", "project", "created_at", "updated_at"}
REVISION_FIELDS = (
    "number",
    "round",
    "kind",
    "author",
    "llm_call_id",
    "provenance",
    "snapshot",
    "changed_fields",
)


def item_fields(item: Item) -> dict:
    item.refresh_from_db()
    return {
        field.name: getattr(item, field.attname)
        for field in Item._meta.concrete_fields
        if field.name not in NOT_COMPARED
    }


def first_revision_of(item: Item) -> dict:
    revision = Revision.objects.get(item=item, number=1)
    return {name: getattr(revision, name) for name in (*REVISION_FIELDS, "note")}


def import_specs(batch_id: int) -> list[NewItem]:
    """An unanswered question, one a person answered, one a model answered (as an import brings them)."""
    source = {"kind": "import", "import_batch": batch_id}
    return [
        NewItem(
            question="Por que a chuva aumenta a colheita?", causal_class="associational", external_id="a"
        ),
        NewItem(
            question="Se eu estudasse à noite, aprenderia mais?",
            context="Um estudante.",
            causal_class="interventional",
            reference_answer="Depende do sono.",
            answer_provenance=source,
            external_id="b",
            metadata={"expertise": "education"},
        ),
        NewItem(
            question="O que teria acontecido sem a vacina?",
            reference_answer="Mais casos.",
            author=A_MODEL,
            answer_provenance={**source, "model": "llama-70b"},
            source="file.csv",
            external_id="c",
        ),
    ]


def test_the_fast_import_path_and_one_item_at_a_time_give_the_same_items_and_first_revisions(owner):
    """The fast path (COPY, for imports of 100,000 rows) and ``item_create`` share ``item_row``."""
    one_by_one, fast = ProjectFactory(), ProjectFactory()
    batch = ImportBatch.objects.create(project=fast, created_by=owner, filename="file.csv")
    made = [
        item_create(project=one_by_one, import_batch_id=batch.pk, **_as_kwargs(spec))
        for spec in import_specs(batch.pk)
    ]
    assert items_create_fast(project=fast, items=import_specs(batch.pk), import_batch_id=batch.pk) == 3
    copied = list(Item.objects.filter(project=fast).order_by("external_id"))

    for single, bulk in zip(made, copied, strict=True):
        assert item_fields(single) == item_fields(bulk), f"item {single.external_id}"
    # The fast path writes an item's first revision when the item first changes: the same revision.
    assert not Revision.objects.filter(item__project=fast).exists()
    for single, bulk in zip(made, copied, strict=True):
        for item in (single, bulk):
            item_revise(item=item, changes={"context": "Outro contexto."}, author=Author(user=owner))
        assert first_revision_of(single) == first_revision_of(bulk), f"item {single.external_id}"


def test_gold_items_are_approved_with_a_decision_the_same_way_on_both_paths(owner, curator):
    one_by_one, fast = ProjectFactory(), ProjectFactory()
    batch = ImportBatch.objects.create(project=fast, created_by=owner, filename="gold.csv")
    answered = [spec for spec in import_specs(batch.pk) if spec.reference_answer]
    made = [
        item_create(
            project=one_by_one,
            import_batch_id=batch.pk,
            approved_by=curator,
            decision_note="gold",
            **_as_kwargs(spec),
        )
        for spec in answered
    ]
    items_create_fast(
        project=fast,
        items=[spec for spec in import_specs(batch.pk) if spec.reference_answer],
        import_batch_id=batch.pk,
        approved_by=curator,
        decision_note="gold",
    )
    copied = list(Item.objects.filter(project=fast).order_by("external_id"))

    for single, bulk in zip(made, copied, strict=True):
        assert item_fields(single) == item_fields(bulk), f"item {single.external_id}"
        assert single.status == Item.Status.APPROVED
        decisions = [
            list(
                CurationDecision.objects.filter(item=item).values_list("curator", "round", "decision", "note")
            )
            for item in (single, bulk)
        ]
        assert decisions[0] == decisions[1] == [(curator.pk, 1, Decision.APPROVE, "gold")]


def test_many_items_at_once_are_the_items_one_at_a_time_with_options_and_first_revisions(owner, annotator):
    one_by_one, batch = ProjectFactory(), ProjectFactory()

    def specs():
        return [
            NewItem(
                question="Qual alternativa explica a queda?",
                reference_answer="A chuva.",
                author=Author(user=annotator),
                options=[{"text": "A chuva.", "role": "correct"}, {"text": "O sol.", "role": "reversal"}],
                note="by hand",
                external_id="x",
            ),
            NewItem(
                question="Uma pergunta gerada?",
                origin=Item.Origin.GENERATED,
                author=Author(llm_call_id=7, provenance={"kind": "model", "model": "m", "call_id": 7}),
                external_id="y",
            ),
        ]

    made = [item_create(project=one_by_one, **_as_kwargs(spec)) for spec in specs()]
    created = items_create(project=batch, items=specs())

    for single, many in zip(made, created, strict=True):
        assert item_fields(single) == item_fields(many), f"item {single.external_id}"
        assert first_revision_of(single) == first_revision_of(many), f"item {single.external_id}"
        options = [
            list(item.options.values_list("position", "text", "role", "rationale")) for item in (single, many)
        ]
        assert options[0] == options[1]
    assert first_revision_of(made[0])["author"] == annotator
    assert first_revision_of(made[1])["llm_call_id"] == 7


CSV_ANSWERED = (
    "question,causal_class,answer\nSe eu estudasse à noite aprenderia mais do que de dia?,"
    "interventional,Depende do sono.\n"
)
CSV_UNANSWERED = (
    "question,causal_class\nSe eu estudasse à noite aprenderia mais do que de dia?,interventional\n"
)
LIFECYCLE_FIELDS = (
    "status",
    "round",
    "version",
    "round_assigned",
    "round_judged",
    "round_disagreement",
    "answer_by",
    "answer_author_id",
)


def lifecycle_state(item: Item) -> tuple:
    item.refresh_from_db()
    return tuple(getattr(item, name) for name in LIFECYCLE_FIELDS)


@pytest.mark.parametrize("answered", [True, False], ids=["answered", "unanswered"])
def test_every_creation_door_starts_the_same_question_in_the_same_state(owner, answered):
    """The import (page, task and command call it), a design's derivation and a direct creation."""
    from designs.causalbench.design import question_item

    answer = "Depende do sono." if answered else ""
    imported_in = ProjectFactory()
    questions_import(
        project=imported_in,
        data=(CSV_ANSWERED if answered else CSV_UNANSWERED).encode(),
        filename="q.csv",
        user=owner,
        length_bounds_on=False,
    )
    [imported] = Item.objects.filter(project=imported_in)
    direct = item_create(
        project=ProjectFactory(),
        question="Se eu estudasse à noite aprenderia mais do que de dia?",
        reference_answer=answer,
    )
    states = {"import": lifecycle_state(imported), "item_create": lifecycle_state(direct)}
    if answered:
        # CausalBench derives its questions with review=True: with an answer that is the default anyway.
        group = ItemGroup.objects.create(project=ProjectFactory(), kind="scenario")
        [scenario_question] = items_create(
            project=group.project,
            items=[
                question_item(
                    group=group,
                    question={"question": direct.question, "perspective": "cause_to_effect", "answer": "yes"},
                    position=0,
                    domain="text",
                )
            ],
        )
        states["causalbench"] = lifecycle_state(scenario_question)
    expected = (
        (Item.Status.IN_REVIEW, 1, 1, 0, 0, None, Item.AnswerBy.HUMAN, None)
        if answered
        else (Item.Status.PENDING, 0, 1, 0, 0, None, Item.AnswerBy.NOBODY, None)
    )
    assert states == dict.fromkeys(states, expected)


def test_items_that_designs_start_in_review_without_an_answer_start_like_any_other():
    """ExpliCa's rated sentences and METER's pairs: in review (round 1) with nobody's answer."""
    project = ProjectFactory()
    item = item_create(project=project, question="A porque B.", review=True)
    assert lifecycle_state(item) == (Item.Status.IN_REVIEW, 1, 1, 0, 0, None, Item.AnswerBy.NOBODY, None)
    assert first_revision_of(item)["kind"] == Revision.Kind.CREATED


# --- closing -----------------------------------------------------------------------------------------------


def in_review_item(project, annotator) -> Item:
    item = ItemFactory(project=project, status=Item.Status.IN_REVIEW, round=1, reference_answer="Sim.")
    Assignment.objects.create(item=item, annotator=annotator, round=1)
    return item


CLOSERS = {
    "approve": lambda item, curator: item_close(item=item, curator=curator, decision=Decision.APPROVE),
    "reject": lambda item, curator: item_close(item=item, curator=curator, decision=Decision.REJECT),
    "revise": lambda item, curator: item_close(
        item=item, curator=curator, decision=Decision.REVISE, note="Explique o mecanismo."
    ),
    "bulk approve": lambda item, curator: items_close(item_ids=[item.pk], curator=curator, note="bulk"),
    "drop as duplicate": lambda item, curator: item_close(
        item=item,
        curator=curator,
        decision=Decision.REJECT,
        duplicate_of=ItemFactory(project=item.project, question="Outra pergunta?"),
    ),
}
STATUS_AFTER = {
    "approve": Item.Status.APPROVED,
    "reject": Item.Status.REJECTED,
    "revise": Item.Status.NEEDS_REVISION,
    "bulk approve": Item.Status.APPROVED,
    "drop as duplicate": Item.Status.REJECTED,
}


@pytest.mark.parametrize("way", CLOSERS)
def test_every_way_of_closing_an_item_records_a_decision_and_ends_its_round(project, curator, annotator, way):
    item = in_review_item(project, annotator)

    CLOSERS[way](item, curator)

    item.refresh_from_db()
    assert item.status == STATUS_AFTER[way]
    decisions = list(CurationDecision.objects.filter(item=item).values_list("round", "curator"))
    assert decisions == [(1, curator.pk)], "one decision, by the curator, for the round closed"
    assert not Assignment.objects.filter(item=item, status=Assignment.Status.ACTIVE).exists(), (
        "nobody still holds a closed round"
    )


def test_a_question_dropped_as_a_duplicate_before_review_has_a_decision_too(project, curator):
    kept = ItemFactory(project=project)
    dropped = ItemFactory(project=project, status=Item.Status.PENDING, round=0, reference_answer="")

    item_close(item=dropped, curator=curator, decision=Decision.REJECT, duplicate_of=kept)

    dropped.refresh_from_db()
    assert (dropped.status, dropped.metadata["duplicate_of"]) == (Item.Status.REJECTED, kept.pk)
    assert CurationDecision.objects.filter(item=dropped, round=0, decision=Decision.REJECT).count() == 1
    assert Revision.objects.filter(item=dropped, kind=Revision.Kind.DECISION).count() == 1


def test_bulk_closing_leaves_items_already_decided_or_not_in_review_alone(project, curator, annotator):
    open_round, decided = in_review_item(project, annotator), in_review_item(project, annotator)
    waiting = ItemFactory(project=project, status=Item.Status.PENDING, round=0, reference_answer="")
    item_close(item=decided, curator=curator, decision=Decision.REJECT)

    closed = items_close(item_ids=[open_round.pk, decided.pk, waiting.pk], curator=curator, note="bulk")

    assert closed == [open_round.pk]
    assert CurationDecision.objects.filter(item=decided).count() == 1
    assert not CurationDecision.objects.filter(item=waiting).exists()


def test_a_model_answered_item_back_from_revision_is_reviewed_again_from_an_empty_round(
    project, curator, annotator
):
    """An item sent back for revision is not stranded, through the lifecycle: revise, a model rewrites, a fresh round."""
    from annotation.services import ItemChange, items_revise

    item = in_review_item(project, annotator)
    Item.objects.filter(pk=item.pk).update(round_assigned=3, round_judged=3, round_disagreement=0.5)
    Judgment.objects.create(item=item, annotator=annotator, round=1, vote=Judgment.Vote.NEEDS_REVISION)
    item_close(item=item, curator=curator, decision=Decision.REVISE, note="Melhore.")

    model = Author(llm_call_id=99, provenance={"kind": "model", "call_id": 99})
    items_revise(
        changes=[ItemChange(item_id=item.pk, changes={"reference_answer": "Melhor."}, author=model)],
        kind=Revision.Kind.MODEL,
        only_if_status=(Item.Status.NEEDS_REVISION,),
        start_round=True,
    )

    assert lifecycle_state(item) == (Item.Status.IN_REVIEW, 2, 2, 0, 0, None, Item.AnswerBy.MODEL, None)


def _as_kwargs(spec: NewItem) -> dict:
    return {name: getattr(spec, name) for name in NewItem.__slots__}
