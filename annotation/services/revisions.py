"""Revising an item, and starting its next round.

Every change to an item's content goes through ``item_revise`` (one item) or ``items_revise``
(a batch of model output), which share their rules: it bumps the item's version (so two people
saving the same version cannot overwrite each other) and appends a ``Revision`` holding the item
as it stands after the change, with who or which model call made it.
"""

import json
from dataclasses import dataclass, replace

from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone
from django.utils.translation import gettext as _

from core.db.bulk import fast_insert, fast_update
from core.db.compiled import CompiledQuery

from ..models import Item, Option, Revision

# Every edit locks its item with this (compiled once, see core.db.compiled).
_LOCKED_ITEM = CompiledQuery(lambda *, item_id: Item.objects.select_for_update().filter(pk=item_id)[:1])

EDITABLE_FIELDS = ("question", "context", "reference_answer", "causal_class")
# The item's fields a revision's snapshot keeps, besides its options.
SNAPSHOT_FIELDS = (*EDITABLE_FIELDS, "answer_by")
REVISION_COLUMNS = (
    "item",
    "number",
    "round",
    "kind",
    "author",
    "llm_call_id",
    "provenance",
    "snapshot",
    "changed_fields",
    "note",
)
OPTION_FIELDS = ("text", "role", "rationale")


class EditConflict(Exception):
    """Someone saved the item after ``expected_version``; ``current`` is the item as it is now."""

    def __init__(self, current: Item, expected_version: int):
        self.current = current
        self.expected_version = expected_version
        super().__init__(
            f"item {current.pk} was changed by someone else (version {current.version}, expected {expected_version})"
        )


def item_snapshot(item: Item, options: list[Option] | None = None) -> dict:
    """The item's content as a revision stores it (``options``: already fetched, in position order)."""
    options = [
        {"position": option.position, "text": option.text, "role": option.role, "rationale": option.rationale}
        for option in (item.options.order_by("position") if options is None else options)
    ]
    return {**{name: getattr(item, name) for name in SNAPSHOT_FIELDS}, "options": options}


class UndoRefused(Exception):
    """A revision cannot be undone; the message says why, for the person."""


@dataclass(frozen=True)
class Author:
    """Who made a change: a person (``user``), a model call (``llm_call_id`` + ``provenance``), or nobody
    named (an import, a seed). ``by_model``: a model wrote it though no call of ours is known (an imported
    model answer, a demo)."""

    user: object = None
    llm_call_id: int | None = None
    provenance: dict | None = None
    by_model: bool = False

    @property
    def is_model(self) -> bool:
        return self.by_model or self.llm_call_id is not None


def _check_editable(changes: dict) -> None:
    unknown = set(changes) - set(EDITABLE_FIELDS)
    if unknown:
        raise ValueError(f"not editable: {', '.join(sorted(unknown))}")


def _apply_changes(item: Item, changes: dict, author: Author) -> list[str]:
    """Set the fields ``changes`` changes on ``item`` (unsaved) and say which; a new answer records its author."""
    changed = [name for name, value in changes.items() if getattr(item, name) != value]
    for name in changed:
        setattr(item, name, changes[name])
    if "reference_answer" in changed:
        item.answer_by, item.answer_author, item.answer_provenance = answer_fields(
            item.reference_answer, author
        )
    return changed


def answer_fields(answer: str, author: Author, provenance: dict | None = None) -> tuple:
    """``answer_by``, ``answer_author`` and ``answer_provenance`` of an item whose answer ``author`` wrote:
    the one rule for a new item (annotation.services.creation) and a revised one. ``provenance`` names a
    source other than the author (an import batch, a seed)."""
    if not answer:
        return Item.AnswerBy.NOBODY, None, {}
    if author.is_model:
        return Item.AnswerBy.MODEL, None, dict(provenance or author.provenance or {})
    return Item.AnswerBy.HUMAN, author.user, dict(provenance or {"kind": "human"})


def _revision(
    item: Item, *, kind: str, author: Author, snapshot: dict, changed: list, note: str, round_: int
):
    return Revision(
        item=item,
        number=item.version,
        round=round_,
        kind=kind,
        author=author.user,
        llm_call_id=author.llm_call_id,
        provenance=dict(author.provenance or {}),
        snapshot=snapshot,
        changed_fields=changed,
        note=note,
    )


@transaction.atomic
def item_revise(
    *,
    item: Item,
    changes: dict,
    author: Author,
    expected_version: int | None = None,
    options: list[dict] | None = None,
    kind: str = Revision.Kind.EDIT,
    note: str = "",
) -> Item:
    """Apply ``changes`` (any of question, context, reference_answer, causal_class) and, when given,
    replace the options with ``options`` (dicts with text, role, rationale, in letter order).

    Raises ``EditConflict`` when ``expected_version`` is given and the item has moved on.
    Returns the item as saved, with its new version.
    """
    _check_editable(changes)
    current = _LOCKED_ITEM.first(item_id=item.pk)
    if current is None:
        raise Item.DoesNotExist(f"item {item.pk} no longer exists")
    if expected_version is not None and current.version != expected_version:
        raise EditConflict(current, expected_version)
    before = item_snapshot(current)

    changed = _apply_changes(current, changes, author)
    if options is not None and _options_differ(before["options"], options):
        current.options.all().delete()
        Option.objects.bulk_create(
            Option(item=current, position=position, **{field: spec.get(field, "") for field in OPTION_FIELDS})
            for position, spec in enumerate(options)
        )
        changed.append("options")
    if not changed:
        return current
    _ensure_first_revision(current, before)

    current.version += 1  # the row is locked until commit, so nobody else can bump it meanwhile
    current.save(
        update_fields=[
            *[name for name in changed if name != "options"],
            "answer_by",
            "answer_author",
            "answer_provenance",
            "version",
            "updated_at",
        ]
    )
    snapshot = (
        item_snapshot(current)
        if "options" in changed
        else {
            **before,
            **{name: getattr(current, name) for name in SNAPSHOT_FIELDS},
        }
    )
    _revision(
        current, kind=kind, author=author, snapshot=snapshot, changed=changed, note=note, round_=current.round
    ).save()
    return current


def _options_differ(before: list[dict], after: list[dict]) -> bool:
    if len(before) != len(after):
        return True
    return any(old.get(f, "") != new.get(f, "") for old, new in zip(before, after) for f in OPTION_FIELDS)


def first_revision(item: Item, *, snapshot: dict, author: Author | None = None, note: str = "") -> Revision:
    """The revision that records how an item started (unsaved): the one rule for every way an item is made.

    ``item_create`` writes it with the item; the bulk import leaves it to the item's first change
    (``_ensure_first_revision``), which knows no author: the import names none, so both give the same.
    """
    author = author or Author()
    provenance = {**(item.answer_provenance or {}), **(author.provenance or {})}
    if item.import_batch_id:
        provenance.setdefault("import_batch", item.import_batch_id)
    return Revision(
        item=item,
        number=1,
        round=item.round,
        kind=Revision.Kind.CREATED,
        author=author.user,
        llm_call_id=author.llm_call_id,
        provenance=provenance,
        snapshot=snapshot,
        note=note,
    )


def _ensure_first_revision(item: Item, snapshot: dict) -> None:
    """Items of a bulk import have no revision yet; record how they started before the first change.

    Every version after the first was written with its revision, so only version 1 can lack one.
    """
    if item.version > 1:
        return
    try:
        with transaction.atomic():
            first_revision(item, snapshot=snapshot).save()
    except IntegrityError:
        pass  # written at creation, or by a concurrent first edit; both hold the same snapshot


# What the next review round sets on an item besides ``round + 1``: the one rule ``item_start_round`` and the
# batch path (``items_revise(start_round=True)``, model answers) share, so no item comes back to review with the
# old round's counters (complete, so nobody is ever asked to review it again).
NEW_ROUND = {
    "status": Item.Status.IN_REVIEW,
    "round_assigned": 0,
    "round_judged": 0,
    "round_disagreement": None,
    "round_wanted": None,
    "round_confidence": None,
}


@transaction.atomic
def item_start_round(*, item: Item) -> Item:
    """Send the item (back) to review: the next round begins and needs fresh judgments.

    The round's counters start again from zero; assignments of the old round can no longer
    be submitted (annotation.judging checks the round).
    """
    Item.objects.filter(pk=item.pk).update(**NEW_ROUND, round=F("round") + 1, updated_at=timezone.now())
    item.refresh_from_db(fields=["round", "updated_at", *NEW_ROUND])
    return item


@dataclass(frozen=True)
class ItemChange:
    """One item's part in ``items_revise``."""

    item_id: int
    changes: dict
    author: Author
    note: str = ""


@transaction.atomic(savepoint=False)  # all or nothing with the caller's transaction
def items_revise(
    *,
    changes: list[ItemChange],
    kind: str = Revision.Kind.EDIT,
    only_if_status: tuple[str, ...] | None = None,
    start_round: bool = False,
) -> tuple[list[Item], dict[int, str | None]]:
    """``item_revise`` for many items in a handful of queries, whatever their number.

    For writers that deliver in batches (model output): the same rules as ``item_revise``
    (``_apply_changes``, versions bumped, a revision per changed item, ``first_revision`` for
    items that had none), without ``expected_version`` and without options. With
    ``only_if_status``, items in another status are left alone; with ``start_round``, the items
    written then start their next review round, as ``item_start_round`` does.

    Returns the changed items and, for each item left alone, its status (None: no such item).
    """
    for change in changes:
        _check_editable(change.changes)
    ids = [change.item_id for change in changes]
    items = {item.pk: item for item in Item.objects.select_for_update().filter(pk__in=ids)}
    left_alone = {pk: None for pk in ids if pk not in items}
    if only_if_status is not None:
        left_alone.update(
            {pk: item.status for pk, item in items.items() if item.status not in only_if_status}
        )
    changes = [change for change in changes if change.item_id not in left_alone]
    ids = [change.item_id for change in changes]
    options: dict[int, list[Option]] = {pk: [] for pk in ids}
    for option in Option.objects.filter(item_id__in=ids).order_by("item_id", "position"):
        options[option.item_id].append(option)
    with_history = set(
        Revision.objects.filter(item_id__in=ids).order_by().values_list("item_id", flat=True).distinct()
    )
    revisions, changed_items, fields = [], [], set()
    now = timezone.now()
    for change in changes:
        item = items[change.item_id]
        before = item_snapshot(item, options[item.pk])
        revision_round = item.round
        first = None if item.pk in with_history else first_revision(item, snapshot=before)
        changed = _apply_changes(item, change.changes, change.author)
        if not changed:
            continue
        if first is not None:
            with_history.add(item.pk)
            revisions.append(first)
        item.version += 1  # the row is locked: nobody else can move it meanwhile
        item.updated_at = now
        if start_round:
            for name, value in NEW_ROUND.items():
                setattr(item, name, value)
            item.round += 1
        fields.update(changed)
        changed_items.append(item)
        revisions.append(
            _revision(
                item,
                kind=kind,
                author=change.author,
                snapshot=item_snapshot(item, options[item.pk]),
                changed=changed,
                note=change.note,
                round_=revision_round,
            )
        )
    if changed_items:
        fields.update(["answer_by", "answer_author", "answer_provenance", "version", "updated_at"])
        if start_round:
            fields.update(["round", *NEW_ROUND])
        fast_update(Item, sorted(fields), changed_items)
    # Revision numbers are versions of rows this transaction holds, so they cannot collide, except
    # with a first revision a concurrent first edit wrote meanwhile: then the insert fails and the
    # caller's transaction with it (item_revise, one at a time, copes with that race).
    fast_insert(
        Revision,
        REVISION_COLUMNS,
        (
            (
                r.item_id,
                r.number,
                r.round,
                r.kind,
                r.author_id,
                r.llm_call_id,
                json.dumps(r.provenance),
                json.dumps(r.snapshot),
                json.dumps(r.changed_fields),
                r.note,
            )
            for r in revisions
        ),
        constants={"created_at": now},
    )
    return changed_items, left_alone


# The fields of a revision's snapshot that an undo puts back (``options`` as a whole list).
UNDOABLE_FIELDS = (*EDITABLE_FIELDS, "options")


@transaction.atomic
def item_undo(*, item: Item, number: int, author: Author) -> Item:
    """Undo revision ``number`` of the item: the fields it changed go back to how the revision before it left
    them. The undo is itself a new revision (kind ``undo``), so it can be undone in turn; nothing is erased.

    Raises ``UndoRefused`` for the item's first revision, a revision that changed nothing undoable, and one
    whose fields a later revision changed again (undo that one first: a later edit is never thrown away).
    """
    if not 1 <= number < 2**31:  # past any revision (and the database's integers)
        raise UndoRefused(_("This item has no revision %(n)s.") % {"n": number})
    current = _LOCKED_ITEM.first(item_id=item.pk)
    if current is None:
        raise Item.DoesNotExist(f"item {item.pk} no longer exists")
    revisions = {
        revision.number: revision
        for revision in Revision.objects.filter(item=current, number__gte=number - 1).order_by("number")
    }
    revision, before = revisions.get(number), revisions.get(number - 1)
    if revision is None:
        raise UndoRefused(_("This item has no revision %(n)s.") % {"n": number})
    if before is None or revision.kind == Revision.Kind.CREATED:
        raise UndoRefused(
            _("Revision %(n)s is how the item started; there is nothing before it.") % {"n": number}
        )
    fields = [name for name in revision.changed_fields or [] if name in UNDOABLE_FIELDS]
    if not fields:
        raise UndoRefused(_("Revision %(n)s changed nothing an undo can put back.") % {"n": number})
    for later in (r for n, r in revisions.items() if n > number):
        again = sorted(set(later.changed_fields or []) & set(fields))
        if again:
            raise UndoRefused(
                _("Revision %(later)s changed %(fields)s again since; undo revision %(later)s first.")
                % {"later": later.number, "fields": ", ".join(again)}
            )
    changes = {name: before.snapshot.get(name, "") for name in fields if name != "options"}
    options = None
    if "options" in fields:
        options = [
            {name: option.get(name, "") for name in OPTION_FIELDS}
            for option in sorted(before.snapshot.get("options") or [], key=lambda o: o.get("position", 0))
        ]
    # Which revision it undoes is a fact of the revision (its provenance), shown in the reader's language.
    author = replace(author, provenance={**(author.provenance or {}), "undoes": number})
    return item_revise(item=current, changes=changes, options=options, author=author, kind=Revision.Kind.UNDO)
