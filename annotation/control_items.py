"""Control items (gold questions): approved items whose answers are known, served unannounced among the work.

A curator marks an approved item as a control item with its known answer to each question the annotator
models aggregate (``ProjectDesign.quality_questions``): by default the item's own decision (the vote "accept",
its causal class). The queue serves one instead of the next item at the project's ``control_rate``; its
judgment is recorded in the item's round like any other, but changes neither the item nor its counters.

Unannounced through every door: an annotator sees a control item as an item of its round awaiting judgment
(status "in review"), in the API's items and assignments, in the list filtered by status and in the counts by
status; curators and owners see it as it is, approved.
"""

from django.core.exceptions import ValidationError
from django.db import models, transaction
from django.db.models import Case, F, Q, Value, When
from django.utils.translation import gettext as _

from .designs import design_for
from .models import Item, Judgment


def control_answers_default(item: Item) -> dict:
    """What the approval of the item says: it deserved "accept", and its class is its causal class."""
    design = design_for(item.project)
    answers = {}
    for question in design.quality_questions(item.project):
        if not design.quality_question_applies(question, item.metadata or {}):
            continue
        if question["source"] == "vote" and design.judgment_asks_vote(item):
            answers[question["key"]] = Judgment.Vote.ACCEPT
        elif question["source"] == "causal_class" and item.causal_class in design.judgment_labels(item):
            answers[question["key"]] = item.causal_class
    return answers


@transaction.atomic
def item_mark_control(*, item: Item, answers: dict | None = None) -> Item:
    """Make an approved item a control item with ``answers`` (by question key; default: its decision)."""
    item = Item.objects.select_for_update().select_related("project").get(pk=item.pk)
    if item.status != Item.Status.APPROVED:
        raise ValidationError({"control": _("only an approved item can be a control item")})
    design = design_for(item.project)
    questions = {
        question["key"]: question
        for question in design.quality_questions(item.project)
        if design.quality_question_applies(question, item.metadata or {})
    }
    answers = control_answers_default(item) if answers is None else dict(answers)
    unknown = sorted(set(answers) - set(questions))
    if unknown:
        raise ValidationError(
            {"control": _("not a question asked of this item: %(keys)s") % {"keys": ", ".join(unknown)}}
        )
    for key, value in answers.items():
        allowed = _allowed(design, item, questions[key])
        if allowed is not None and str(value) not in allowed:
            raise ValidationError(
                {
                    "control": _("%(key)s: choose among %(values)s")
                    % {"key": key, "values": ", ".join(allowed)}
                }
            )
    if not answers:
        raise ValidationError({"control": _("give the known answer of at least one question")})
    item.control_answers = {key: str(value) for key, value in answers.items()}
    item.save(update_fields=["control_answers", "updated_at"])
    return item


@transaction.atomic
def item_unmark_control(*, item: Item) -> Item:
    Item.objects.filter(pk=item.pk).update(control_answers=None)
    item.control_answers = None
    return item


def _allowed(design, item: Item, question: dict) -> list[str] | None:
    if question["source"] == "vote":
        return list(Judgment.Vote.values)
    if question["source"] == "causal_class":
        return list(design.judgment_labels(item))
    criterion = next(
        (c for c in design.judgment_criteria(item) if c["key"] == question.get("criterion")), None
    )
    if criterion is None:
        return None
    return [str(n) for n in range(int(criterion.get("min", 1)), int(criterion.get("max", 5)) + 1)]


# What annotators see of a control item's status: that of any item of a round awaiting judgment.
STATUS_SEEN_BY_ANNOTATORS = Item.Status.IN_REVIEW
CONTROL = Q(status=Item.Status.APPROVED, control_answers__isnull=False)


def is_control(item: Item) -> bool:
    """Whether ``item`` is served as a control item (approved, with known answers)."""
    return item.status == Item.Status.APPROVED and item.control_answers is not None


def status_seen(item: Item, *, curator: bool) -> str:
    """The status ``item`` shows its reader: the truth for a curator, a control item's disguise otherwise."""
    return STATUS_SEEN_BY_ANNOTATORS if not curator and is_control(item) else item.status


def with_status_seen(items, *, curator: bool):
    """``items`` annotated with ``status_seen``, the status their reader sees (``status_seen``), to filter and
    count by it."""
    if curator:
        return items.annotate(status_seen=F("status"))
    return items.annotate(
        status_seen=Case(
            When(CONTROL, then=Value(STATUS_SEEN_BY_ANNOTATORS)),
            default=F("status"),
            output_field=models.CharField(),
        )
    )
