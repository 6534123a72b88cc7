"""What an annotator does with an assignment: edit the item, judge it, or write its answer.

Every door (the item page, the API, commands) calls these. They lock the assignment and the
item, check that the assignment still belongs to the item's current round, and keep the
round's counters (see annotation.queue) right.
"""

from dataclasses import dataclass

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Exists, OuterRef
from django.utils import timezone
from django.utils.translation import gettext as _

from core.db.compiled import CompiledQuery

from .agreement import item_agreement
from .control_items import is_control
from .designs import design_for, unseen_before_judging
from .label_models import round_confidence, round_wanted
from .labels import criterion_label
from .models import Assignment, CurationDecision, Item, Judgment, JudgmentVersion, Option, Project, Revision
from .queue import assignment_reclaim
from .services import Author, EditConflict, item_revise, item_snapshot, item_start_round

# The parts of an item a person edits one at a time, and the item fields each one holds.
EDIT_PARTS = {
    "question": ("question",),
    "context": ("context",),
    "answer": ("reference_answer",),
    "options": ("options",),
}


class AssignmentClosed(Exception):
    """The assignment can no longer be submitted; the message says why, for the person."""


@transaction.atomic
def judgment_submit(
    *, assignment: Assignment, ratings: dict, vote: str, causal_class: str, comment: str = ""
) -> Judgment:
    """Record the annotator's judgment of the item in this round and close the assignment.

    ``ratings`` maps every criterion key of the project to a whole number within its scale.
    Raises ``ValidationError`` (by field) for bad input and ``AssignmentClosed`` when the
    round moved on or the slot was given to someone else.
    """
    item = _lock_item(assignment)
    project = item.project
    if assignment.round == 0:
        raise AssignmentClosed(_("This question waits for its answer, not for a judgment."))
    design = design_for(project)  # round_complete below
    rules = judgment_rules(item)
    clean_ratings, vote, causal_class = judgment_check(
        rules, ratings=ratings, vote=vote, causal_class=causal_class, comment=comment
    )
    criteria = rules.criteria
    assignment = _claim(assignment, item, project)
    control = _is_control(item)
    judgment = Judgment.objects.create(
        item=item,
        annotator_id=assignment.annotator_id,
        assignment=assignment,
        round=item.round,
        ratings=clean_ratings,
        vote=vote,
        causal_class=causal_class,
        comment=comment.strip(),
        edited=item.edited_by_annotator,
        own_answer=item.answer_author_id == assignment.annotator_id,
    )
    if control:
        return judgment  # measured against the known answer; the decided item stays as it is
    item.round_judged += 1
    fields = ["round_judged"]
    if project.overlap_max is not None and item.round_judged >= project.overlap:
        # Adaptive overlap: how sure the annotator models now are of the item's label decides whether it wants more.
        item.round_confidence = round_confidence(item=item, project=project)
        item.round_wanted = round_wanted(
            judged=item.round_judged, confidence=item.round_confidence, project=project
        )
        fields += ["round_confidence", "round_wanted"]
    complete = item.round_judged >= (item.round_wanted or project.overlap)
    if complete:
        round_judgments = Judgment.objects.filter(item=item, round=item.round)
        item.round_disagreement = item_agreement(round_judgments, criteria).disagreement
        fields.append("round_disagreement")
    item.save(update_fields=fields)
    if complete:
        design.round_complete(item)
    return judgment


class JudgmentLocked(Exception):
    """The judgment can no longer be changed; the message says why, for the person."""


@transaction.atomic
def judgment_change(
    *, judgment: Judgment, ratings: dict, vote: str, causal_class: str, comment: str = ""
) -> Judgment:
    """The annotator changes a judgment they submitted, while its round is still open (in review, undecided).

    The earlier version is kept (JudgmentVersion); agreement and the round's disagreement read the latest.
    """
    item = Item.objects.select_for_update().select_related("project").get(pk=judgment.item_id)
    decided = CurationDecision.objects.filter(item=item, round=item.round)
    # A control item's judgment given after its round was decided stays open as an ordinary one does, so that
    # nothing tells it apart (annotation.control_items); it never touches the decided round's figures.
    control = is_control(item) and not decided.filter(created_at__gte=judgment.created_at).exists()
    if item.round != judgment.round or (
        not control and (item.status != Item.Status.IN_REVIEW or decided.exists())
    ):
        raise JudgmentLocked(
            _("This round is over (decided or a new round began): the judgment stays as it is.")
        )
    project = item.project
    rules = judgment_rules(item)
    clean_ratings, vote, causal_class = judgment_check(
        rules, ratings=ratings, vote=vote, causal_class=causal_class, comment=comment
    )
    criteria = rules.criteria
    judgment = Judgment.objects.select_for_update().get(pk=judgment.pk)
    if (judgment.ratings, judgment.vote, judgment.causal_class, judgment.comment) == (
        clean_ratings,
        vote,
        causal_class,
        comment.strip(),
    ):
        return judgment  # nothing changed: no new version
    JudgmentVersion.objects.create(
        judgment=judgment,
        ratings=judgment.ratings,
        vote=judgment.vote,
        causal_class=judgment.causal_class,
        comment=judgment.comment,
        made_at=judgment.changed_at or judgment.created_at,
    )
    judgment.ratings, judgment.vote, judgment.causal_class = clean_ratings, vote, causal_class
    judgment.comment, judgment.changed_at = comment.strip(), timezone.now()
    judgment.save(update_fields=["ratings", "vote", "causal_class", "comment", "changed_at"])
    if not control and item.round_judged >= (item.round_wanted or project.overlap):
        round_judgments = Judgment.objects.filter(item=item, round=item.round)
        item.round_disagreement = item_agreement(round_judgments, criteria).disagreement
        item.save(update_fields=["round_disagreement"])
    return judgment


@dataclass(frozen=True)
class JudgmentRules:
    """What a judgment of one item asks, as its design decides (``ProjectDesign.judgment_criteria``,
    ``judgment_labels``, ``judgment_asks_vote``): the one rule submitting and changing a judgment, the form
    and the API all read."""

    project: Project
    criteria: list[dict]
    labels: list[str]
    asks_vote: bool


def judgment_rules(item: Item) -> JudgmentRules:
    design = design_for(item.project)
    return JudgmentRules(
        project=item.project,
        criteria=list(design.judgment_criteria(item)),
        labels=list(design.judgment_labels(item)),
        asks_vote=bool(design.judgment_asks_vote(item)),
    )


def judgment_check(
    rules: JudgmentRules, *, ratings: dict, vote: str | None, causal_class: str | None, comment: str
) -> tuple[dict, str, str]:
    """Validate a judgment against ``rules``: the ratings as whole numbers, the vote and the class as stored.

    Where the design asks for no vote, the vote is stored empty whatever was sent (the API refuses one sent:
    ``judgment_refuse_unasked``). Raises ValidationError by field.
    """
    vote, causal_class = (vote or "") if rules.asks_vote else "", causal_class or ""
    clean = judgment_validate(
        project=rules.project,
        ratings=ratings or {},
        vote=vote,
        causal_class=causal_class,
        comment=comment or "",
        criteria=rules.criteria,
        labels=rules.labels,
        asks_vote=rules.asks_vote,
    )
    return clean, vote, causal_class


def judgment_last(*, project: Project, annotator) -> Judgment | None:
    """The annotator's most recent judgment in the project (for *Previous*)."""
    return (
        Judgment.objects.filter(item__project=project, annotator=annotator, assignment__isnull=False)
        .order_by("-created_at", "-pk")
        .first()
    )


def judgment_validate(
    *,
    project: Project,
    ratings: dict,
    vote: str,
    causal_class: str,
    comment: str,
    criteria: list[dict] | None = None,
    labels: list[str] | None = None,
    asks_vote: bool = True,
) -> dict:
    """Check a judgment against the project (or the ``criteria`` and ``labels`` its design asks for this item);
    return the ratings as whole numbers or raise ValidationError."""
    criteria = project.criteria if criteria is None else criteria
    labels = project.label_set if labels is None else labels
    errors: dict[str, str] = {}
    clean: dict[str, int] = {}
    unknown = sorted(set(ratings) - {criterion["key"] for criterion in criteria})
    if unknown:
        errors["ratings"] = _("unknown criteria: %(keys)s") % {"keys": ", ".join(unknown)}
    for criterion in criteria:
        key, low, high = criterion["key"], int(criterion.get("min", 1)), int(criterion.get("max", 5))
        value = ratings.get(key)
        try:
            number = int(value)
        except (TypeError, ValueError):
            errors[f"rating_{key}"] = _rating_error(criterion, low, high)
            continue
        if not low <= number <= high or str(value).strip() not in (str(number), f"{number}.0"):
            errors[f"rating_{key}"] = _rating_error(criterion, low, high)
            continue
        clean[key] = number
    if asks_vote and vote not in Judgment.Vote.values:
        errors["vote"] = _("vote accept, reject or needs revision")
    if labels and causal_class not in labels:
        errors["causal_class"] = _("choose the causal class among %(labels)s") % {"labels": ", ".join(labels)}
    elif not labels and causal_class:
        errors["causal_class"] = _("this judgment asks for no causal class")
    if vote == Judgment.Vote.NEEDS_REVISION and not (comment or "").strip():
        errors["comment"] = _("say in the comment what needs revising")
    if errors:
        raise ValidationError(errors)
    return clean


@transaction.atomic
def answer_submit(*, assignment: Assignment, answer: str, expected_version: int) -> Item:
    """Write the reference answer of a natural question; the item then enters review (round 1).

    Raises ``EditConflict`` when someone changed the item since ``expected_version``.
    """
    answer = (answer or "").strip()
    if not answer:
        raise ValidationError({"answer": _("write the answer, or skip the question")})
    item = _lock_item(assignment)
    if assignment.round != 0:
        raise AssignmentClosed(_("This item is in review; judge it instead of answering it."))
    assignment = _claim(assignment, item, item.project)
    item = item_revise(
        item=item,
        changes={"reference_answer": answer},
        author=Author(user=assignment.annotator),
        expected_version=expected_version,
        kind=Revision.Kind.ANSWER,
    )
    return item_start_round(item=item)


def answer_reopenable(*, assignment: Assignment, item: Item) -> bool:
    """Whether the annotator may still rewrite the answer they wrote: its first review round is open (in review,
    undecided) and nobody has judged it yet (a reviewer's judgment is about the text they read)."""
    return (
        assignment.round == 0
        and assignment.status == Assignment.Status.SUBMITTED
        and item.answer_author_id == assignment.annotator_id
        and item.status == Item.Status.IN_REVIEW
        and item.round == 1
        and not Judgment.objects.filter(item=item, round=item.round).exists()
        and not CurationDecision.objects.filter(item=item, round=item.round).exists()
    )


@transaction.atomic
def answer_rewrite(*, assignment: Assignment, answer: str, expected_version: int) -> Item:
    """Reopen a written answer: its author saves a new text while ``answer_reopenable`` holds (a new revision).

    Raises ``AssignmentClosed`` once a reviewer judged it or the round is over, ``EditConflict`` when someone
    changed the item since ``expected_version``."""
    answer = (answer or "").strip()
    if not answer:
        raise ValidationError({"answer": _("write the answer, or skip the question")})
    item = _lock_item(assignment)
    if not answer_reopenable(assignment=assignment, item=item):
        raise AssignmentClosed(
            _("Reviewers have judged this answer already, or its round is over: it stays.")
        )
    return item_revise(
        item=item,
        changes={"reference_answer": answer},
        author=Author(user=assignment.annotator),
        expected_version=expected_version,
        kind=Revision.Kind.ANSWER,
    )


def item_edit(*, item: Item, user, part: str, values: dict | list, base_version: int) -> Item:
    """Save one part of the item (question, context, answer or options) edited from ``base_version``.

    When someone else saved meanwhile but left this part as it was, the edit applies on top of
    theirs. When they changed this same part, ``EditConflict`` is raised and nothing is saved:
    the page shows both versions so the person can merge.
    """
    if part not in EDIT_PARTS:
        raise ValueError(f"unknown part {part!r}; editable: {', '.join(EDIT_PARTS)}")
    if part == "options":
        values = _options_keeping_unseen_roles(item=item, user=user, options=values)
    changes, options = ({}, values) if part == "options" else ({EDIT_PARTS[part][0]: values}, None)
    author = Author(user=user)
    try:
        return item_revise(
            item=item, changes=changes, options=options, author=author, expected_version=base_version
        )
    except EditConflict as conflict:
        if not part_unchanged_since(item=conflict.current, part=part, version=base_version):
            raise
        return item_revise(
            item=item,
            changes=changes,
            options=options,
            author=author,
            expected_version=conflict.current.version,
        )


def _options_keeping_unseen_roles(*, item: Item, user, options: list[dict]) -> list[dict]:
    """An annotator who may not see the options' roles yet (they state the label asked for) edits their texts
    only: each option keeps its role and rationale by position, whatever the edit sent; an option added is
    ``other``. Curators, and annotators once they judged the item, edit the roles too."""
    judged = Judgment.objects.filter(item=item, annotator=user).exists()
    if "options.role" not in unseen_before_judging(project=item.project, item=item, user=user, judged=judged):
        return options
    current = list(item.options.order_by("position").values("role", "rationale"))
    kept = []
    for position, option in enumerate(options):
        known = current[position] if position < len(current) else {"role": Option.Role.OTHER, "rationale": ""}
        kept.append({**option, "role": known["role"], "rationale": known["rationale"]})
    return kept


def part_unchanged_since(*, item: Item, part: str, version: int) -> bool:
    """Whether ``part`` of the item is as it was at ``version`` (read from that version's revision)."""
    base = Revision.objects.filter(item=item, number=version).values_list("snapshot", flat=True).first()
    if base is None:
        return False
    now = item_snapshot(item)
    return all(base.get(field) == now.get(field) for field in EDIT_PARTS[part])


def _rating_error(criterion: dict, low: int, high: int) -> str:
    return _("rate %(criterion)s with a whole number from %(low)s to %(high)s") % {
        "criterion": criterion_label(criterion),
        "low": low,
        "high": high,
    }


def _lock_item(assignment: Assignment) -> Item:
    """Lock the assignment's item (always before its assignments, the order every writer keeps), and read
    whether the annotator edited it in this round (for ``Judgment.edited``) in the same query."""
    item = _LOCKED_ITEM_WITH_EDITS.first(item_id=assignment.item_id, annotator_id=assignment.annotator_id)
    if item is None:
        raise Item.DoesNotExist(f"item {assignment.item_id} of assignment {assignment.pk} no longer exists")
    return item


def _locked_item_and_whether_edited(*, item_id: int, annotator_id: int):
    edits = Revision.objects.filter(
        item=OuterRef("pk"), round=OuterRef("round"), author_id=annotator_id, kind=Revision.Kind.EDIT
    )
    return (
        Item.objects.select_for_update(of=("self",))
        .select_related("project")
        .annotate(edited_by_annotator=Exists(edits))
        .filter(pk=item_id)[:1]
    )


# Every submit runs it: compiled once (see core.db.compiled).
_LOCKED_ITEM_WITH_EDITS = CompiledQuery(_locked_item_and_whether_edited)


def _claim(assignment: Assignment, item: Item, project: Project) -> Assignment:
    """Mark the assignment submitted if it is still the annotator's in the item's current round.

    The usual case is one conditional update; anything else (submitted already, skipped, expired
    and released, a round that moved on) is looked at row by row to say why, or to reclaim a place.
    """
    expected_status = Item.Status.PENDING if assignment.round == 0 else Item.Status.IN_REVIEW
    if _is_control(item):
        expected_status = Item.Status.APPROVED
    if item.round != assignment.round or item.status != expected_status:
        raise AssignmentClosed(
            _("This item has moved on since it was handed to you (it was decided or a new round began).")
        )
    now = timezone.now()
    if Assignment.objects.filter(pk=assignment.pk, status=Assignment.Status.ACTIVE).update(
        status=Assignment.Status.SUBMITTED, finished_at=now
    ):
        assignment.status, assignment.finished_at = Assignment.Status.SUBMITTED, now
        return assignment
    assignment = Assignment.objects.get(pk=assignment.pk)
    _ensure_open(assignment, item, project)  # raises, or takes a released place back
    _finish(assignment)
    return assignment


def _ensure_open(assignment: Assignment, item: Item, project: Project) -> None:
    """Raise AssignmentClosed unless the assignment can still be submitted; reclaim a released place if free."""
    if assignment.status == Assignment.Status.SUBMITTED:
        raise AssignmentClosed(_("You already submitted this item."))
    if assignment.status == Assignment.Status.SKIPPED:
        raise AssignmentClosed(_("You skipped this question."))
    if assignment.status == Assignment.Status.EXPIRED and not assignment_reclaim(assignment, item, project):
        raise AssignmentClosed(_("Your time on this item ran out and others have taken its places."))


def _finish(assignment: Assignment) -> None:
    assignment.status = Assignment.Status.SUBMITTED
    assignment.finished_at = timezone.now()
    assignment.save(update_fields=["status", "finished_at"])


def _is_control(item: Item) -> bool:
    """A control item served unannounced (annotation.control_items): approved, with known answers."""
    return item.status == Item.Status.APPROVED and item.control_answers is not None
