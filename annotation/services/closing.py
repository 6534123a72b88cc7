"""Closing an item's round with a curator's decision: approve into the gold collection, reject, send back
for revision, or drop as a near-duplicate of another question.

Every way — the review page, the API, bulk approval, a design's rules (METER votes, CausalBench checks,
ExpliCa aggregation), the near-duplicate page — goes through ``item_close`` or its batch form
``items_close``, which share ``_close_rounds``: a ``CurationDecision`` per item and round, the new status,
and the round's assignments expired. "Revise" moves the item to *needs revision* and, once the transaction
commits, sends ``annotation.signals.revision_requested`` (the generation app asks a model to rewrite the
answer from the reviewers' comments).
"""

from dataclasses import dataclass

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from core.db.bulk import fast_insert, fast_update

from ..models import Assignment, CurationDecision, Item, Revision
from ..signals import revision_requested
from .revisions import _ensure_first_revision, item_snapshot

Decision = CurationDecision.Decision
STATUS_AFTER = {
    Decision.APPROVE: Item.Status.APPROVED,
    Decision.REJECT: Item.Status.REJECTED,
    Decision.REVISE: Item.Status.NEEDS_REVISION,
}


class DecisionRefused(Exception):
    """The item cannot be decided now; the message says why, for the person."""


@transaction.atomic
def item_close(
    *, item: Item, curator, decision: str, note: str = "", duplicate_of: Item | None = None
) -> CurationDecision:
    """Decide the item's current round. ``note`` is required for "revise" (it guides the rewrite).

    ``duplicate_of``: reject the item as a near-duplicate of that one (kept), whatever its round: it leaves
    every queue, its history stays (a revision records the drop). An approved item is never dropped.
    """
    if decision not in STATUS_AFTER:
        raise ValidationError({"decision": _("decide approve, reject or revise")})
    note = (note or "").strip()
    if decision == Decision.REVISE and not note:
        raise ValidationError({"note": _("say what should be revised")})
    if duplicate_of is not None and decision != Decision.REJECT:
        raise ValueError("a near-duplicate is dropped by rejecting it")
    item = Item.objects.select_for_update().get(pk=item.pk)
    if duplicate_of is not None:
        return _drop_as_duplicate(item, of=duplicate_of, curator=curator)
    if item.status != Item.Status.IN_REVIEW:
        raise DecisionRefused(
            _("Only an item in review can be decided; this one is “%(status)s”.")
            % {"status": item.get_status_display()}
        )
    if CurationDecision.objects.filter(item=item, round=item.round).exists():
        raise DecisionRefused(_("Round %(round)s of this item is already decided.") % {"round": item.round})
    made = _close_round(item, curator=curator, decision=decision, note=note)
    if decision == Decision.REVISE:
        transaction.on_commit(
            lambda: revision_requested.send(sender=CurationDecision, item=item, decision=made)
        )
    return made


@transaction.atomic
def items_close(
    *, item_ids, curator, decision: str = Decision.APPROVE, note: str, metadata: dict | None = None
) -> list[int]:
    """``item_close`` for many items in a few queries (approve or reject): those of ``item_ids`` in review
    whose round is not decided yet are decided; the others are left alone. Returns the ids decided, in order.

    ``metadata`` ({item id: metadata}): what a design's rule recorded on the items it decides, written in the
    same statement as their new status (each rewrite of an item row updates its fifteen indexes). Only the items
    decided are written; the caller writes the others' metadata if it wants them."""
    if decision not in (Decision.APPROVE, Decision.REJECT):
        raise ValueError(f"items_close approves or rejects, not {decision!r}")
    locked = [
        _Open(pk, round_number)
        for pk, round_number in Item.objects.select_for_update()
        .filter(pk__in_many=item_ids, status=Item.Status.IN_REVIEW)
        .values_list("pk", "round")
    ]
    already = set(
        CurationDecision.objects.filter(item_id__in_many=[item.pk for item in locked]).values_list(
            "item_id", "round"
        )
    )
    open_rounds = sorted(
        (item for item in locked if (item.pk, item.round) not in already), key=lambda i: i.pk
    )
    _close_rounds(open_rounds, curator=curator, decision=decision, note=note, metadata=metadata)
    return [item.pk for item in open_rounds]


@dataclass
class _Open:
    """An item's round to close, read as plain values (thousands of model instances cost a tenth of a second)."""

    pk: int
    round: int
    status: str = ""
    updated_at: object = None
    metadata: dict | None = None


def _close_rounds(
    items: list[Item | _Open], *, curator, decision: str, note: str, metadata: dict | None = None
) -> None:
    """The one rule of closing a round: its decision recorded, the item's status set, and whoever still holds
    the item gets nothing more to submit. ``items`` are locked and in the round being closed; ``metadata``
    replaces theirs where given."""
    now = timezone.now()
    curator_id = curator.pk if curator is not None else None
    fast_insert(
        CurationDecision,
        ["item", "round"],
        ((item.pk, item.round) for item in items),
        constants={"curator": curator_id, "decision": decision, "note": note, "created_at": now},
    )
    ids = [item.pk for item in items]
    status = STATUS_AFTER[decision]
    for item in items:
        item.status, item.updated_at = status, now
    relabelled = [item for item in items if metadata and item.pk in metadata]
    for item in relabelled:
        item.metadata = metadata[item.pk]
    fast_update(Item, ["status", "updated_at", "metadata"], relabelled)
    if len(relabelled) < len(ids):
        done = {item.pk for item in relabelled}
        Item.objects.filter(pk__in_many=[pk for pk in ids if pk not in done]).update(
            status=status, updated_at=now
        )
    Assignment.objects.filter(item_id__in_many=ids, status=Assignment.Status.ACTIVE).update(
        status=Assignment.Status.EXPIRED, finished_at=now
    )


def _close_round(item: Item, **decided) -> CurationDecision:
    """``_close_rounds`` for one item, returning its decision."""
    _close_rounds([item], **decided)
    return CurationDecision.objects.get(item=item, round=item.round)


def _drop_as_duplicate(item: Item, *, of: Item, curator) -> CurationDecision:
    if item.project_id != of.project_id or item.pk == of.pk:
        raise ValidationError({"item": _("Choose two different questions of the same project.")})
    if item.status == Item.Status.APPROVED:
        raise ValidationError(
            {
                "item": _("Question #%(id)s is in the gold collection; keep it and drop the other.")
                % {"id": item.pk}
            }
        )
    note = f"near-duplicate of #{of.pk}"
    before = item_snapshot(item)
    _ensure_first_revision(item, before)
    item.metadata = {**(item.metadata or {}), "duplicate_of": of.pk}
    item.version += 1
    item.save(update_fields=["metadata", "version", "updated_at"])
    Revision.objects.create(
        item=item,
        number=item.version,
        round=item.round,
        kind=Revision.Kind.DECISION,
        author=curator,
        snapshot=before,
        changed_fields=["status"],
        note=note,
    )
    # A round decided already (a pending item's round 0 has no decision yet) takes the drop instead.
    CurationDecision.objects.filter(item=item, round=item.round).delete()
    return _close_round(item, curator=curator, decision=Decision.REJECT, note=note)
