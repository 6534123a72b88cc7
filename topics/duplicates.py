"""The curator's answer to a near-duplicate pair: keep both, or keep one and drop the other."""

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from annotation.models import CurationDecision
from annotation.services import item_close

from .models import NearDuplicate

KEEP_CHOICES = ("first", "second", "both")


@transaction.atomic
def near_duplicate_resolve(*, pair: NearDuplicate, keep: str, curator) -> NearDuplicate:
    """``keep``: "both" (they differ), or "first" / "second" (the other is rejected as its duplicate)."""
    if keep not in KEEP_CHOICES:
        raise ValidationError({"keep": _("Keep the first, the second or both questions.")})
    pair = NearDuplicate.objects.select_for_update().select_related("first", "second").get(pk=pair.pk)
    if pair.status != NearDuplicate.Status.OPEN:
        raise ValidationError({"keep": _("This pair was decided already.")})
    if keep != "both":
        kept, dropped = (pair.first, pair.second) if keep == "first" else (pair.second, pair.first)
        item_close(
            item=dropped, curator=curator, decision=CurationDecision.Decision.REJECT, duplicate_of=kept
        )
    pair.status = NearDuplicate.Status.KEPT if keep == "both" else NearDuplicate.Status.MERGED
    pair.decided_by = curator
    pair.decided_at = timezone.now()
    pair.save(update_fields=["status", "decided_by", "decided_at"])
    return pair
