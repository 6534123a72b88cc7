"""Around the curator's decisions (made by ``services.item_close``): bulk approval by a rule, and sending
an item that was revised by hand back to review.

An item sent back for revision waits until someone — a model or a person — rewrites it and
calls ``item_return_to_review``.
"""

from dataclasses import dataclass

from django.db import transaction
from django.utils.translation import gettext as _

from .agreement import ItemAgreement
from .models import CurationDecision, Item, Judgment, Project
from .review import complete_rounds, round_reviews
from .services import DecisionRefused, item_start_round, items_close

Decision = CurationDecision.Decision


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
    approve = items_close(item_ids=still, curator=curator, decision=Decision.APPROVE, note=note)
    return BulkApproval(approved=approve, no_longer_matching=sorted(set(item_ids) - set(approve)))
