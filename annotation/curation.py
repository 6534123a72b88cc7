"""The curator's decisions: approve into the gold collection, reject, or send back for revision.

A decision closes the item's round. "Revise" moves the item to *needs revision* and, once the
transaction commits, sends ``annotation.signals.revision_requested`` (the generation app asks a
model to rewrite the answer from the reviewers' comments). Until someone — a model or a
person — rewrites it and calls ``item_return_to_review``, the item waits.
"""

from dataclasses import dataclass

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from .agreement import ItemAgreement
from .models import Assignment, CurationDecision, Item, Judgment, Project
from .review import complete_rounds, round_reviews
from .services import item_start_round
from .signals import revision_requested

Decision = CurationDecision.Decision
STATUS_AFTER = {
    Decision.APPROVE: Item.Status.APPROVED,
    Decision.REJECT: Item.Status.REJECTED,
    Decision.REVISE: Item.Status.NEEDS_REVISION,
}


class DecisionRefused(Exception):
    """The item cannot be decided now; the message says why, for the person."""


@transaction.atomic
def item_decide(*, item: Item, curator, decision: str, note: str = "") -> CurationDecision:
    """Decide the item's current round. ``note`` is required for "revise" (it guides the rewrite)."""
    if decision not in STATUS_AFTER:
        raise ValidationError({"decision": _("decide approve, reject or revise")})
    note = (note or "").strip()
    if decision == Decision.REVISE and not note:
        raise ValidationError({"note": _("say what should be revised")})
    item = Item.objects.select_for_update().get(pk=item.pk)
    if item.status != Item.Status.IN_REVIEW:
        raise DecisionRefused(
            _("Only an item in review can be decided; this one is “%(status)s”.")
            % {"status": item.get_status_display()}
        )
    if CurationDecision.objects.filter(item=item, round=item.round).exists():
        raise DecisionRefused(_("Round %(round)s of this item is already decided.") % {"round": item.round})
    made = CurationDecision.objects.create(
        item=item, curator=curator, round=item.round, decision=decision, note=note
    )
    now = timezone.now()
    item.status = STATUS_AFTER[decision]
    item.save(update_fields=["status", "updated_at"])
    # The round is over: whoever still holds the item gets nothing more to submit.
    Assignment.objects.filter(item=item, round=item.round, status=Assignment.Status.ACTIVE).update(
        status=Assignment.Status.EXPIRED, finished_at=now
    )
    if decision == Decision.REVISE:
        transaction.on_commit(
            lambda: revision_requested.send(sender=CurationDecision, item=item, decision=made)
        )
    return made


@transaction.atomic
def item_return_to_review(*, item: Item) -> Item:
    """After a rewrite by hand, send an item that needed revision back to review: a new round begins."""
    item = Item.objects.select_for_update().get(pk=item.pk)
    if item.status != Item.Status.NEEDS_REVISION:
        raise DecisionRefused(
            _("Only an item that needs revision goes back to review; this one is “%(status)s”.")
            % {"status": item.get_status_display()}
        )
    return item_start_round(item=item)


@dataclass(frozen=True)
class ApprovalRule:
    """Which complete rounds a bulk approval takes, e.g. every vote accept and every mean rating ≥ 4."""

    votes: str = "all_accept"  # "all_accept" or "majority_accept"
    min_mean_rating: float | None = 4.0  # every criterion's mean at least this
    class_agreed: bool = False  # every class label equals the item's causal class

    VOTE_RULES = ("all_accept", "majority_accept")

    def __post_init__(self):
        if self.votes not in self.VOTE_RULES:
            raise ValueError(f"votes must be one of {', '.join(self.VOTE_RULES)}, not {self.votes!r}")

    def matches(self, item: Item, agreement: ItemAgreement) -> bool:
        accept = Judgment.Vote.ACCEPT
        if not agreement.n_judgments:
            return False
        if self.votes == "all_accept" and any(vote != accept for vote in agreement.votes):
            return False
        if self.votes == "majority_accept" and agreement.majority_vote != accept:
            return False
        if self.min_mean_rating is not None:
            means = agreement.mean_ratings.values()
            if any(mean is None or mean < self.min_mean_rating for mean in means):
                return False
        return not (self.class_agreed and any(label != item.causal_class for label in agreement.class_labels))

    def describe(self) -> str:
        parts = [
            _("every vote is “accept”") if self.votes == "all_accept" else _("the majority votes “accept”")
        ]
        if self.min_mean_rating is not None:
            parts.append(
                _("every criterion's mean rating is at least %(n)s") % {"n": f"{self.min_mean_rating:g}"}
            )
        if self.class_agreed:
            parts.append(_("every class label matches the item's causal class"))
        return _("Items whose round is complete and where %(conditions)s.") % {
            "conditions": _(" and ").join(parts)
        }


def bulk_approval_matches(*, project: Project, rule: ApprovalRule, item_ids: list[int] | None = None) -> list:
    """The complete rounds (RoundReview) the rule takes, most agreed first; only ``item_ids`` when given."""
    items = complete_rounds(project)
    if item_ids is not None:
        items = items.filter(pk__in=item_ids)
    reviews = round_reviews(project, list(items))
    matched = [review for review in reviews if rule.matches(review.item, review.agreement)]
    return sorted(matched, key=lambda review: (review.agreement.disagreement, review.item.pk))


@dataclass
class BulkApproval:
    approved: list[int]
    no_longer_matching: list[int]


@transaction.atomic
def items_bulk_approve(*, project: Project, curator, rule: ApprovalRule, item_ids: list[int]) -> BulkApproval:
    """Approve the previewed items that still match the rule (an item judged or decided since is left out)."""
    still = {
        review.item.pk for review in bulk_approval_matches(project=project, rule=rule, item_ids=item_ids)
    }
    note = _("Bulk approval: %(rule)s") % {"rule": rule.describe()}
    approve = items_approve(item_ids=still, curator=curator, note=note)
    return BulkApproval(approved=approve, no_longer_matching=sorted(set(item_ids) - set(approve)))


@transaction.atomic
def items_approve(*, item_ids, curator, note: str) -> list[int]:
    """Approve, in a few queries, those of ``item_ids`` that are in review and whose round is not decided yet
    (``item_decide`` for many items at once); returns the ids approved, in order."""
    locked = set(
        Item.objects.select_for_update()
        .filter(pk__in=list(item_ids), status=Item.Status.IN_REVIEW)
        .values_list("pk", flat=True)
    )
    rounds = dict(Item.objects.filter(pk__in=locked).values_list("pk", "round"))
    already = set(CurationDecision.objects.filter(item_id__in=locked).values_list("item_id", "round"))
    approve = sorted(pk for pk in locked if (pk, rounds[pk]) not in already)
    CurationDecision.objects.bulk_create(
        (
            CurationDecision(
                item_id=pk, curator=curator, round=rounds[pk], decision=Decision.APPROVE, note=note
            )
            for pk in approve
        ),
        batch_size=2000,
    )
    now = timezone.now()
    Item.objects.filter(pk__in=approve).update(status=Item.Status.APPROVED, updated_at=now)
    # The round is over: whoever still holds the item gets nothing more to submit.
    Assignment.objects.filter(item_id__in=approve, status=Assignment.Status.ACTIVE).update(
        status=Assignment.Status.EXPIRED, finished_at=now
    )
    return approve
