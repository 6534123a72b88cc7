"""Creating items: one set of rules for every way an item is made.

An import, a model's generated question, a design deriving its items (a CausalityCheck
checklist, a CausalBench scenario, a METER question, an ExpliCa pair), the demo and a gold
import all make items through ``items_create`` (``item_create`` is one item of it) or, for
imports of 100,000 rows, ``items_create_fast`` (COPY). All three take their field values from
``item_row`` — initial status and round, who wrote the answer, the counters — and their first
revision from ``first_revision``. The fast path leaves the first revision to the item's first
change (another 100,000-row insert would cost a third of the import); it names no author, so
the revision written then is the one ``items_create`` would have written.
"""

import json
from collections.abc import Iterable
from dataclasses import dataclass

from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from core.db.bulk import fast_insert

from ..importing.funnel import text_key
from ..models import CurationDecision, Item, Option, Project, Revision
from ..search import next_item_id, search_backlog_mark, uses_vectors, vectors_fill
from .revisions import OPTION_FIELDS, Author, answer_fields, first_revision, item_snapshot

NOBODY = Author()  # an item nobody named made (an import, a seed)
A_MODEL = Author(by_model=True)  # a model's answer that came with the item (an imported file's, a seed's)

# What every new item starts with, whatever made it: the first version and an empty round.
ITEM_CONSTANTS = {"version": 1, "round_assigned": 0, "round_judged": 0, "round_disagreement": None}
# The fields ``item_row`` gives, in its order: the item's content as the caller gives it, then its state,
# which the lifecycle's rule (``item_state``) decides, then two a COPY of an import leaves NULL (its items
# belong to no group and name no person as the author of their answers).
COPY_COLUMNS = (
    "project_id",
    "position_in_group",
    "question",
    "context",
    "causal_class",
    "topic_id",
    "origin",
    "source",
    "external_id",
    "text_key",
    "reference_answer",
    "import_batch_id",
    "metadata",
    "answer_by",
    "answer_provenance",
    "status",
    "round",
)
ITEM_COLUMNS = (*COPY_COLUMNS, "answer_author_id", "group_id")


@dataclass(slots=True)
class NewItem:
    """One item to create. ``author``: who made it, and its answer when it has one (a person, a model call,
    or nobody named: an import, a seed). ``answer_provenance``: where the answer came from when that is more
    than its author (an import batch, a seed). ``review``: start in review (round 1); by default an item
    does when it has an answer, and waits for one (round 0) when not. ``options``: dicts with text, role and
    rationale, in letter order (or with their ``position``)."""

    question: str
    context: str = ""
    causal_class: str = ""
    reference_answer: str = ""
    author: Author = NOBODY
    answer_provenance: dict | None = None
    review: bool | None = None
    origin: str = Item.Origin.NATURAL
    source: str = ""
    external_id: str = ""
    topic_id: int | None = None
    group_id: int | None = None
    position_in_group: int = 0
    metadata: dict | None = None
    options: list[dict] | tuple = ()
    note: str = ""
    text_key: str = ""  # computed from the question unless the caller has it already


def item_state(
    *, answer: str, author: Author, answer_provenance: dict | None, review: bool | None, approved: bool
):
    """``answer_by``, ``answer_provenance``, ``status``, ``round`` and ``answer_author_id`` of a new item: the
    rule every creation path shares. Approved (it came in reviewed), in review (round 1), or waiting for its
    answer (round 0); the answer's author as ``answer_fields`` says."""
    answered = bool(answer)
    answer_by, answer_author, provenance = answer_fields(answer, author, answer_provenance)
    if approved:
        if not answered:
            raise ValueError("an item approved at creation needs its answer")
        status, round_ = Item.Status.APPROVED, 1
    elif answered if review is None else review:
        status, round_ = Item.Status.IN_REVIEW, 1
    else:
        status, round_ = Item.Status.PENDING, 0
    return answer_by, provenance, status, round_, answer_author.pk if answer_author is not None else None


def item_row(
    spec: NewItem,
    *,
    project_id: int,
    import_batch_id: int | None = None,
    approved: bool = False,
    copy_state: tuple | None = None,
) -> tuple:
    """The values of ``ITEM_COLUMNS`` for a new item.

    For a COPY (``items_create_fast``), ``copy_state`` is the item's state as the database takes it (the
    first four values of ``item_state``, JSON written), worked out once for many rows: then the row has the
    values of ``COPY_COLUMNS``, its metadata written as JSON.
    """
    if copy_state is None:
        state = item_state(
            answer=spec.reference_answer,
            author=spec.author,
            answer_provenance=spec.answer_provenance,
            review=spec.review,
            approved=approved,
        )
        metadata, tail = spec.metadata or {}, (spec.group_id,)
    else:
        state, metadata, tail = copy_state, _json(spec.metadata), ()
    return (
        project_id,
        spec.position_in_group,
        spec.question,
        spec.context,
        spec.causal_class,
        spec.topic_id,
        spec.origin,
        spec.source,
        spec.external_id,
        spec.text_key or text_key(spec.question),
        spec.reference_answer,
        import_batch_id,
        metadata,
        *state,
        *tail,
    )


@transaction.atomic
def items_create(
    *,
    project: Project,
    items: Iterable[NewItem],
    import_batch_id: int | None = None,
    approved_by=None,
    decision_note: str = "",
) -> list[Item]:
    """Create ``items`` in ``project`` with their options and first revisions, in a few queries.

    ``approved_by``: the items come in reviewed (a gold import); they are approved, each with a curation
    decision by that person.
    """
    specs = list(items)
    approved = approved_by is not None
    made = [
        Item(
            **ITEM_CONSTANTS,
            **dict(
                zip(
                    ITEM_COLUMNS,
                    item_row(spec, project_id=project.pk, import_batch_id=import_batch_id, approved=approved),
                )
            ),
        )
        for spec in specs
    ]
    made = Item.objects.bulk_create(made)
    vectors_fill(item.pk for item in made)
    options = {
        item.pk: [
            Option(
                item=item,
                position=spec_option.get("position", position),
                **{name: spec_option[name] for name in OPTION_FIELDS if name in spec_option},
            )
            for position, spec_option in enumerate(spec.options)
        ]
        for item, spec in zip(made, specs)
    }
    Option.objects.bulk_create(option for item_options in options.values() for option in item_options)
    Revision.objects.bulk_create(
        first_revision(
            item,
            snapshot=item_snapshot(item, sorted(options[item.pk], key=lambda option: option.position)),
            author=spec.author,
            note=spec.note,
        )
        for item, spec in zip(made, specs)
    )
    if approved:
        CurationDecision.objects.bulk_create(
            _gold_decision(item_id=item.pk, round_=item.round, curator=approved_by, note=decision_note)
            for item in made
        )
    return made


def item_create(
    *,
    project: Project,
    import_batch_id: int | None = None,
    approved_by=None,
    decision_note: str = "",
    **fields,
) -> Item:
    """Create one item (``fields``: those of ``NewItem``); ``items_create`` for one."""
    return items_create(
        project=project,
        items=[NewItem(**fields)],
        import_batch_id=import_batch_id,
        approved_by=approved_by,
        decision_note=decision_note,
    )[0]


def items_create_fast(
    *,
    project: Project,
    items: Iterable[NewItem],
    import_batch_id: int,
    approved_by=None,
    decision_note: str = "",
) -> int:
    """``items_create`` for imports of 100,000 rows: one COPY (PostgreSQL) or executemany, the same rows.

    Items without options, whose author is nobody named (an import): their first revision is written by
    their first change, with the same rule. Returns how many items were written. Call it inside the
    import's transaction. Making ``items`` must not touch the database (an import's come from its file and its
    spool): on SQLite they are made in a second thread while the database writes (``fast_insert``'s
    ``made_apart``).
    """
    now = timezone.now()
    approved = approved_by is not None

    # A file's rows share a handful of states (answered or not, by a model or not): each is worked out once,
    # by the same rule, and kept with the objects it was worked out from (so their ids stay theirs).
    states: dict[tuple, tuple] = {}

    def rows():
        for spec in items:
            if (
                spec.options
                or spec.group_id is not None
                or (spec.author is not NOBODY and spec.author is not A_MODEL)
            ):
                raise ValueError(
                    "items_create_fast takes items of no group, without options, made by nobody named"
                )
            key = (bool(spec.reference_answer), id(spec.author), id(spec.answer_provenance), spec.review)
            known = states.get(key)
            if known is None:
                answer_by, provenance, status, round_, _author = item_state(
                    answer=spec.reference_answer,
                    author=spec.author,
                    answer_provenance=spec.answer_provenance,
                    review=spec.review,
                    approved=approved,
                )
                state = (answer_by, _json(provenance), status, round_)
                known = states[key] = (state, spec.author, spec.answer_provenance)
            yield item_row(spec, project_id=project.pk, import_batch_id=import_batch_id, copy_state=known[0])

    # Their search vectors are filled after the commit, in the background (annotation.search).
    first_id = next_item_id() if uses_vectors() else None
    # An import writes its items in several calls, each its own transaction: the decisions are those of this call's.
    written_before = (
        Item.with_unsettled.filter(import_batch_id=import_batch_id).aggregate(last=Max("pk"))["last"] or 0
        if approved
        else 0
    )
    written = fast_insert(
        Item,
        COPY_COLUMNS,
        rows(),
        # The round's counters are left to their database defaults (db_default), which are ITEM_CONSTANTS': three
        # values fewer to send for each of 100,000 rows.
        constants={"version": ITEM_CONSTANTS["version"], "created_at": now, "updated_at": now},
        made_apart=True,
    )
    if written and first_id is not None:
        search_backlog_mark(project, first_id)
    if approved:
        # Read before the decisions' insert starts: on PostgreSQL it is a COPY, and a query on the same
        # connection while a COPY is open waits for it forever.
        made = list(
            Item.with_unsettled.filter(
                project=project, import_batch_id=import_batch_id, pk__gt=written_before
            ).values_list("pk", "round")
        )
        fast_insert(
            CurationDecision,
            ["item_id", "round"],
            made,
            constants={
                "curator_id": approved_by.pk,
                "decision": CurationDecision.Decision.APPROVE,
                "note": decision_note,
                "created_at": now,
            },
        )
    return written


def _json(value: dict | None) -> str:
    return json.dumps(value, ensure_ascii=False) if value else "{}"


def _gold_decision(*, item_id: int, round_: int, curator, note: str) -> CurationDecision:
    return CurationDecision(
        item_id=item_id, curator=curator, round=round_, decision=CurationDecision.Decision.APPROVE, note=note
    )
