"""The annotator's queue: which item to hand out next, and what happens to abandoned assignments.

The rules:

- **Work.** An item in review needs judgments while its current round has fewer than
  ``project.overlap`` live assignments (active or submitted). A natural question without a
  reference answer (round 0, pending) needs one person to write the answer. Reviewing comes
  first; answering when nothing is left to review (or when the annotator asks for it).
- **Adaptive overlap.** A project with ``overlap_max`` wants ``overlap`` judgments at least; after each
  further judgment the judgment service stores on the item how many its round now wants
  (``Item.round_wanted``: one more while the aggregated label's probability, ``Item.round_confidence``, is
  below the project's threshold, at most ``overlap_max``). The queue reads only those two fields, so it
  needs nothing from the annotator models themselves (annotation.label_models).
- **No repeats.** Nobody gets the same item twice in a round, not even after their assignment
  expired or was skipped (a unique constraint backs this).
- **Breadth-first.** Items that already have assignments in their round come before fresh ones,
  fullest first (among equals, the least certain label first), so rounds complete instead of many items each waiting for one more judgment.
  Fresh items go oldest first.
- **Expertise.** An item's tag is ``item.metadata["expertise"]`` (one string; an import keeps an
  ``expertise`` column there). Fresh items whose tag is among the annotator's
  ``Membership.expertise`` come first, then untagged items, then items tagged for other
  expertise. Expertise decides who starts an item; breadth-first decides who finishes it, so a
  round with more judgments than the project has experts still completes.
- **No self-review while other work exists.** Whoever wrote an item's answer is handed it for review
  only when nothing else is left for them, answering included (answer passes come before reviews of
  one's own answers), and only if the project allows it (``Project.allow_self_review``; small teams
  need everyone). Such a judgment is marked (``Judgment.own_answer``) and agreement leaves it out by default.
- **Topics.** When the project has topics marked selected, only items of those topics are served.
- **At the same instant.** Candidates are locked with ``SELECT … FOR UPDATE SKIP LOCKED`` on
  PostgreSQL: two annotators asking for the last open slot of an item get different items; when
  every candidate left is locked by someone else, the request waits for those locks (taken in id
  order, holding no others, so two waiting requests never deadlock) instead of answering "nothing
  left" while slots are about to be free. On
  SQLite every transaction is IMMEDIATE (see settings), so such requests run one after the other.
  One annotator's own requests (two tabs) are serialised by locking their membership row.
- **Control items.** With ``project.control_rate`` set, that share of requests is served an approved control item
  the annotator never judged (annotation.control_items), unannounced; it counts toward no round.
- **Abandonment.** An assignment expires ``project.assignment_timeout_minutes`` after it was
  handed out or last opened; its slot returns to the pool the next time anybody asks for an item
  in any project (and with ``python manage.py release_expired_assignments``).
"""

import random
from collections import Counter
from datetime import timedelta

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import (
    Case,
    Count,
    Exists,
    F,
    IntegerField,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
    Value,
    When,
)
from django.utils import timezone
from django.utils.translation import gettext as _

from core.db.bulk import commit_without_waiting_for_disk
from core.db.compiled import CompiledQuery

from .designs.base import design_for
from .models import Assignment, Item, Membership, Project, item_expertise_tag

REVIEW = "review"
ANSWER = "answer"
CHECK = "check"  # a design's own check queue (CausalBench's blind check): see ``waiting_counts``
KINDS = (REVIEW, ANSWER)


def assignment_next(*, project: Project, annotator, kind: str | None = None) -> Assignment | None:
    """The annotator's current assignment in the project, or a new one; None when nothing waits for them.

    ``kind`` narrows the work to ``"review"`` or ``"answer"``; by default reviewing comes first.
    """
    if kind is not None and kind not in KINDS:
        raise ValueError(f"kind must be one of {', '.join(KINDS)}, not {kind!r}")
    with transaction.atomic():
        # Handing out an item need not survive a database crash (the annotator would just get another one).
        # Judgments and edits do wait for the disk.
        commit_without_waiting_for_disk()
        # One query (this runs on every "next item"): lock the membership, and learn whether the annotator
        # holds an item already, whether the project selected topics, and whether any assignment expired.
        membership = _MEMBERSHIP.first(
            shape={"kind": kind}, project_id=project.pk, annotator_id=annotator.pk, now=timezone.now()
        )
        if membership is None or membership.overdue:
            assignments_release_expired()
        if membership is None or membership.held:
            current = active_assignment(project=project, annotator=annotator, kind=kind)
            if current is not None:
                return current
        # A control item is one to judge: never handed out for an answer to write.
        if kind != ANSWER and project.control_rate and random.random() < project.control_rate:
            control = control_assignment_new(project=project, annotator=annotator)
            if control is not None:
                return control
        if membership is not None:
            tags, topics_selected = (
                [str(tag) for tag in membership.expertise or []],
                bool(membership.topics_selected),
            )
        else:  # a superuser who is not a member
            tags, topics_selected = [], project.topics.filter(selected=True).exists()
        shape = {
            "kind": kind,
            "design": project.design,
            "topics_selected": topics_selected,
            "several_judges": max(project.overlap, project.overlap_max or 0) > 1,
            "self_review": project.allow_self_review,
        }
        values = {
            "project_id": project.pk,
            "annotator_id": annotator.pk,
            "overlap": project.overlap,
            "tags": tags,
        }
        concurrent = transaction.get_connection().features.has_select_for_update_skip_locked
        # First skip what others are handing out this instant, in the queue's order.
        before_skipping = transaction.savepoint() if concurrent else None
        for first_candidate in _CANDIDATES.each(shape={**shape, "waiting": False}, **values):
            item = first_candidate()
            if item is not None:
                return _assign(project, item, annotator)
        if not concurrent:
            return None  # SQLite: the transaction ran alone, so nothing was skipped
        # Everything left was locked by others handing it out: wait for those locks (PostgreSQL then
        # re-checks each row, so a slot filled meanwhile is passed over). A row re-checked and passed
        # over stays locked until the savepoint is rolled back, so no request waits while holding such
        # rows from an earlier query, and within a query rows are locked in one order (by id) that every
        # request shares: two requests can never each wait for a row the other holds (no deadlock).
        transaction.savepoint_rollback(before_skipping)
        for first_candidate in _CANDIDATES.each(shape={**shape, "waiting": True}, **values):
            before_waiting = transaction.savepoint()
            item = first_candidate()
            if item is not None:
                return _assign(project, item, annotator)
            transaction.savepoint_rollback(before_waiting)
    return None


def _membership_with_state(
    *, project_id: int, annotator_id: int, now, kind: str | None
) -> QuerySet[Membership]:
    return (
        Membership.objects.select_for_update(of=("self",))
        .filter(project_id=project_id, user_id=annotator_id)
        .annotate(
            held=Subquery(
                _active(project_id, annotator_id, kind, now).order_by("assigned_at", "pk").values("pk")[:1]
            ),
            topics_selected=Exists(Project.objects.filter(pk=project_id, topics__selected=True)),
            # Any project's: the partial index of active assignments by expiry answers without a join.
            overdue=Exists(_overdue(None, now)),
        )[:1]
    )


def _candidate_queries(
    *,
    project_id: int,
    annotator_id: int,
    overlap: int,
    tags: list[str],
    kind: str | None,
    design: str,
    topics_selected: bool,
    several_judges: bool,
    self_review: bool,
    waiting: bool,
) -> list[QuerySet[Item]]:
    """The candidate passes, each locking its first row: skipping rows others hold, or waiting for them.

    Waiting passes lock in id order and do not split work by how far an item has got: a row is re-checked
    after the wait, and a fresh item that someone just started must still count as work."""
    if waiting:
        items = eligible_items(project_id, annotator_id, topics_selected)
        own_answer = Q(answer_author_id=annotator_id)
        work = _work(items, kind, overlap, design)
        passes = [candidates.exclude(own_answer) for candidates, _ in work]
        if self_review:
            passes += [candidates.filter(own_answer) for candidates, reviewing in work if reviewing]
        return [candidates.order_by("id").select_for_update(of=("self",))[:1] for candidates in passes]
    passes = _candidate_passes(
        project_id, annotator_id, overlap, kind, tags, topics_selected, several_judges, self_review, design
    )
    return [candidates.select_for_update(skip_locked=True, of=("self",))[:1] for candidates in passes]


# Compiled once per shape: building these querysets cost more than the database took to answer them.
_MEMBERSHIP = CompiledQuery(_membership_with_state)
_CANDIDATES = CompiledQuery(_candidate_queries)


def active_assignment(*, project: Project, annotator, kind: str | None = None) -> Assignment | None:
    """The annotator's unfinished, unexpired assignment in the project (the oldest), if any."""
    return _active(project, annotator, kind).select_related("item").order_by("assigned_at", "pk").first()


def _active(project, annotator, kind: str | None, now=None) -> QuerySet[Assignment]:
    """The annotator's live assignments in the project (each given as a model or an id)."""
    assignments = Assignment.objects.filter(
        annotator=annotator,
        status=Assignment.Status.ACTIVE,
        item__project=project,
        item__round=F("round"),
        expires_at__gt=now or timezone.now(),
    ).filter(
        Q(item__status__in=[Item.Status.IN_REVIEW, Item.Status.PENDING])
        | Q(item__status=Item.Status.APPROVED, item__control_answers__isnull=False)
    )
    if kind == REVIEW:
        assignments = assignments.filter(round__gt=0)
    elif kind == ANSWER:
        assignments = assignments.filter(round=0)
    return assignments


def assignments_release_expired(*, project: Project | None = None) -> int:
    """Mark active assignments past their expiry as expired and give their slots back; return how many.

    Each assignment is claimed with a conditional update, so two requests releasing at once
    give a slot back only once. Reading first keeps the usual case (nothing expired) to one query.
    """
    now = timezone.now()
    rows = list(_overdue(project, now).values_list("pk", "item_id", "round"))
    released = 0
    for pk, item_id, round_number in rows:
        with transaction.atomic():
            # The item first, then its assignment: the order every writer keeps, so none deadlock.
            Item.objects.select_for_update().filter(pk=item_id).first()
            claimed = Assignment.objects.filter(
                pk=pk, status=Assignment.Status.ACTIVE, expires_at__lte=now
            ).update(status=Assignment.Status.EXPIRED, finished_at=now)
            if claimed:
                _give_back_slots(item_id, round_number, 1)
                released += claimed
    return released


def _overdue(project: Project | None, now) -> QuerySet[Assignment]:
    overdue = Assignment.objects.filter(status=Assignment.Status.ACTIVE, expires_at__lte=now)
    return overdue.filter(item__project=project) if project is not None else overdue


def assignment_touch(*, assignment: Assignment, project: Project) -> None:
    """Keep an assignment someone is working on from expiring (written only when half its time is gone)."""
    if assignment.status != Assignment.Status.ACTIVE:
        return
    timeout = timedelta(minutes=project.assignment_timeout_minutes)
    now = timezone.now()
    if assignment.expires_at and assignment.expires_at - now > timeout / 2:
        return
    assignment.expires_at = now + timeout
    Assignment.objects.filter(pk=assignment.pk, status=Assignment.Status.ACTIVE).update(
        expires_at=assignment.expires_at
    )


@transaction.atomic
def assignment_skip(*, assignment: Assignment, reason: str) -> Assignment:
    """Skip a question as too hard to answer; the reason is kept, and the item returns to the pool for others."""
    reason = (reason or "").strip()
    if not reason:
        raise ValidationError({"reason": _("say why the question is skipped")})
    Item.objects.select_for_update().filter(pk=assignment.item_id).first()  # the item first, as everywhere
    assignment = Assignment.objects.select_for_update().get(pk=assignment.pk)
    if assignment.round != 0:
        raise ValidationError({"reason": _("only a question waiting for its answer can be skipped")})
    if assignment.status not in (Assignment.Status.ACTIVE, Assignment.Status.EXPIRED):
        raise ValidationError({"reason": _("this question is no longer yours to skip")})
    was_active = assignment.status == Assignment.Status.ACTIVE
    assignment.status = Assignment.Status.SKIPPED
    assignment.skip_reason = reason
    assignment.finished_at = timezone.now()
    assignment.save(update_fields=["status", "skip_reason", "finished_at"])
    if was_active:
        _give_back_slots(assignment.item_id, assignment.round, 1)
    return assignment


class SkipUndoRefused(Exception):
    """A skip can no longer be undone; the message says why, for the person."""


@transaction.atomic
def assignment_unskip(*, assignment: Assignment) -> Assignment:
    """Undo a skip: the question is the annotator's again (the reason is dropped), if nobody else took it and
    it still waits for its answer. Raises ``SkipUndoRefused`` otherwise."""
    item = Item.objects.select_for_update().select_related("project").get(pk=assignment.item_id)
    assignment = Assignment.objects.select_for_update().get(pk=assignment.pk)
    if assignment.status != Assignment.Status.SKIPPED:
        raise SkipUndoRefused(_("This question was not skipped."))
    if item.round != assignment.round or item.status != Item.Status.PENDING:
        raise SkipUndoRefused(_("Someone answered this question meanwhile: the skip stays."))
    if item.round_assigned >= _slots(item.project, item):
        raise SkipUndoRefused(_("Someone else is answering this question now: the skip stays."))
    assignment.status, assignment.skip_reason, assignment.finished_at = Assignment.Status.ACTIVE, "", None
    assignment.expires_at = timezone.now() + timedelta(minutes=item.project.assignment_timeout_minutes)
    assignment.save(update_fields=["status", "skip_reason", "finished_at", "expires_at"])
    Item.objects.filter(pk=item.pk).update(round_assigned=F("round_assigned") + 1)
    return assignment


def history_neighbours(*, assignment: Assignment) -> dict:
    """The annotator's own work in the project before and after ``assignment``, in the order they finished it
    (answers, judgments and skips; the item in hand comes last): ids of the previous and next assignment."""
    mine = Assignment.objects.filter(
        annotator_id=assignment.annotator_id, item__project_id=assignment.item.project_id
    )
    done = mine.filter(status__in=[Assignment.Status.SUBMITTED, Assignment.Status.SKIPPED])
    if (
        assignment.status in (Assignment.Status.SUBMITTED, Assignment.Status.SKIPPED)
        and assignment.finished_at
    ):
        key = (assignment.finished_at, assignment.pk)
        earlier = done.filter(Q(finished_at__lt=key[0]) | Q(finished_at=key[0], pk__lt=key[1]))
        later = done.filter(Q(finished_at__gt=key[0]) | Q(finished_at=key[0], pk__gt=key[1]))
        following = later.order_by("finished_at", "pk").values_list("pk", flat=True).first()
        if following is None:
            current = _active(assignment.item.project, assignment.annotator_id, None).exclude(
                pk=assignment.pk
            )
            following = current.order_by("assigned_at", "pk").values_list("pk", flat=True).first()
    else:
        earlier, following = done, None
    previous = earlier.order_by("-finished_at", "-pk").values_list("pk", flat=True).first()
    return {"previous": previous, "next": following}


def assignment_reclaim(assignment: Assignment, item: Item, project: Project) -> bool:
    """Re-activate an expired assignment whose slot is still free; call inside a transaction holding the item.

    Lets someone who left an item open past the timeout still submit, unless others took the place.
    """
    if item.round != assignment.round or item.round_assigned >= _slots(project, item):
        return False
    assignment.status = Assignment.Status.ACTIVE
    assignment.finished_at = None
    assignment.expires_at = timezone.now() + timedelta(minutes=project.assignment_timeout_minutes)
    assignment.save(update_fields=["status", "finished_at", "expires_at"])
    Item.objects.filter(pk=item.pk).update(round_assigned=F("round_assigned") + 1)
    item.round_assigned += 1
    return True


def _slots(project: Project, item: Item) -> int:
    return 1 if item.round == 0 else item.round_wanted or project.overlap


def _give_back_slots(item_id: int, round_number: int, n: int) -> None:
    # Only while the item is still in that round: a new round starts its counters from zero.
    Item.objects.filter(pk=item_id, round=round_number, round_assigned__gte=F("round_judged") + n).update(
        round_assigned=F("round_assigned") - n
    )


def _assign(project: Project, item: Item, annotator, control: bool = False) -> Assignment:
    now = timezone.now()
    assignment = Assignment.objects.create(
        item=item,
        annotator=annotator,
        round=item.round,
        expires_at=now + timedelta(minutes=project.assignment_timeout_minutes),
    )
    if not control:  # a control item's round is decided: it has no slots to count
        Item.objects.filter(pk=item.pk).update(round_assigned=F("round_assigned") + 1)
        item.round_assigned += 1
    assignment.item = item
    return assignment


def control_assignment_new(*, project: Project, annotator) -> Assignment | None:
    """Hand the annotator a control item they have not judged, as ``assignment_next`` does at the project's
    rate (the demo also calls it, to have control items judged); None when none is left for them."""
    control = _control_candidate(project, annotator)
    return None if control is None else _assign(project, control, annotator, control=True)


def _control_candidate(project: Project, annotator) -> Item | None:
    """A control item the annotator has not judged (annotation.control_items), picked at random: served in
    place of the next item, looking like any other."""
    return (
        eligible_items(project, annotator)
        .filter(status=Item.Status.APPROVED, control_answers__isnull=False)
        .exclude(Exists(Assignment.objects.filter(item=OuterRef("pk"), annotator=annotator)))
        .order_by("?")
        .first()
    )


def eligible_items(project, annotator, topics_selected: bool | None = None) -> QuerySet[Item]:
    """Items of the project the annotator may be handed: selected topics only (if any), none seen this round.

    ``project`` and ``annotator`` are models or ids."""
    items = Item.objects.filter(project=project).exclude(
        Exists(Assignment.objects.filter(item=OuterRef("pk"), annotator=annotator, round=OuterRef("round")))
    )
    if topics_selected is None:
        topics_selected = project.topics.filter(selected=True).exists()
    if topics_selected:
        items = items.filter(topic__selected=True)
    return items


def _open_slots(overlap) -> Q:
    """The round has fewer live assignments than it wants: the project's overlap, or what the adaptive
    overlap set on the item (``Item.round_wanted``) after its latest judgment."""
    return Q(round_wanted__isnull=True, round_assigned__lt=overlap) | Q(
        round_wanted__isnull=False, round_assigned__lt=F("round_wanted")
    )


def _review_work(items: QuerySet[Item], overlap: int, design: str | None = None) -> QuerySet[Item]:
    items = items.filter(~Q(round=0), status=Item.Status.IN_REVIEW).filter(_open_slots(overlap))
    held_back = design_for(design).review_held_back() if design else None
    return items.exclude(held_back) if held_back is not None else items


def _answer_work(items: QuerySet[Item]) -> QuerySet[Item]:
    return items.filter(
        status=Item.Status.PENDING,
        round=0,
        origin=Item.Origin.NATURAL,
        reference_answer="",
        round_assigned__lt=1,
    )


def _work(
    items: QuerySet[Item],
    kind: str | None,
    overlap: int,
    design: str | None = None,
) -> list[tuple[QuerySet[Item], bool]]:
    """The work the annotator asked for, in order, each marked whether it is reviewing: review, then answer."""
    work = []
    if kind in (None, REVIEW):
        work.append((_review_work(items, overlap, design), True))
    if kind in (None, ANSWER):
        work.append((_answer_work(items), False))
    return work


def _candidate_passes(
    project_id: int,
    annotator_id: int,
    overlap: int,
    kind: str | None,
    tags: list[str],
    topics_selected: bool,
    several_judges: bool,
    self_review: bool,
    design: str | None = None,
) -> list[QuerySet[Item]]:
    """Querysets to try in order; the first that yields an unlocked item wins.

    Reviews of one's own answers come after every other pass (answering included), and not at all
    unless the project allows them."""
    items = eligible_items(project_id, annotator_id, topics_selected)
    own_answer = Q(answer_author_id=annotator_id)
    passes, own_passes = [], []
    for candidates, reviewing in _work(items, kind, overlap, design):
        several_slots = reviewing and several_judges
        candidates = candidates.alias(expertise=item_expertise_tag())
        if several_slots:
            started = candidates.filter(round_assigned__gt=0)
            if reviewing:
                own_passes.append(started.filter(own_answer).order_by("-round_assigned", "id"))
                started = started.exclude(own_answer)
            # Fullest first; among equals the least certain label first (adaptive overlap), then the oldest.
            order = ["-round_assigned", F("round_confidence").asc(nulls_last=True), "id"]
            if tags:
                started = started.alias(
                    mine=Case(
                        When(expertise__in=tags, then=Value(0)), default=Value(1), output_field=IntegerField()
                    )
                )
                order.insert(1, "mine")
            passes.append(started.order_by(*order))
        fresh = candidates.filter(round_assigned=0)
        others = fresh.exclude(own_answer) if reviewing else fresh
        oldest_first = ("created_at", "id")  # served by the partial indexes item_queue_fresh*
        if tags:
            passes.append(others.filter(expertise__in=tags).order_by(*oldest_first))
        passes.append(others.filter(expertise__isnull=True).order_by(*oldest_first))
        passes.append(others.order_by(*oldest_first))
        if reviewing:
            own_passes.append(fresh.filter(own_answer).order_by(*oldest_first))
    # Whoever wrote the answer reviews it only when nothing else is left for them, and if the project allows.
    return passes + own_passes if self_review else passes


def waiting_counts(user, projects) -> dict[int, dict[str, int]]:
    """For each project: how many items wait for this user now, to review and to answer (one query); and, in a
    design whose own queue hands out what the review queue holds back (CausalBench's blind check), to check."""
    projects = list(projects)
    if not projects:
        return {}
    mine = Assignment.objects.filter(item=OuterRef("pk"), annotator=user, round=OuterRef("round"))
    any_selected = Exists(Project.objects.filter(pk=OuterRef("project"), topics__selected=True))
    reviewable = Q(status=Item.Status.IN_REVIEW, round__gt=0) & _open_slots(F("project__overlap"))
    checkable = Q(pk__in=[])
    checking = set()
    for key in sorted({project.design for project in projects}):
        design = design_for(key)
        held_back = design.review_held_back()
        if held_back is not None:
            reviewable &= ~(Q(project__design=key) & held_back)
            # What the design's own queue hands out instead (CausalBench's blind check) is work all the same,
            # counted apart: the review queue does not hand it out.
            own_queue = design.held_back_work()
            if own_queue is not None:
                checkable |= Q(project__design=key) & own_queue
                checking.add(key)
    rows = (
        Item.objects.filter(project__in=projects)
        .filter(~any_selected | Q(topic__selected=True))
        .exclude(Exists(mine))
        .values("project_id")
        .annotate(
            review=Count(
                "pk",
                filter=reviewable & (Q(project__allow_self_review=True) | ~Q(answer_author=user)),
            ),
            check=Count(
                "pk", filter=checkable & (Q(project__allow_self_review=True) | ~Q(answer_author=user))
            ),
            answer=Count(
                "pk",
                filter=Q(
                    status=Item.Status.PENDING,
                    round=0,
                    origin=Item.Origin.NATURAL,
                    reference_answer="",
                    round_assigned__lt=1,
                ),
            ),
        )
    )
    counts = {
        project.pk: {REVIEW: 0, ANSWER: 0, **({CHECK: 0} if project.design in checking else {})}
        for project in projects
    }
    for row in rows:
        counts[row["project_id"]].update({REVIEW: row["review"], ANSWER: row["answer"]})
        if CHECK in counts[row["project_id"]]:
            counts[row["project_id"]][CHECK] = row["check"]
    return counts


def done_today(user, projects) -> dict[int, dict[str, int]]:
    """For each project: what the user finished today (judged, answered, skipped), in one query."""
    start = timezone.localtime().replace(hour=0, minute=0, second=0, microsecond=0)
    rows = (
        Assignment.objects.filter(annotator=user, finished_at__gte=start, item__project__in=list(projects))
        .values("item__project_id")
        .annotate(
            judged=Count("pk", filter=Q(status=Assignment.Status.SUBMITTED, round__gt=0)),
            answered=Count("pk", filter=Q(status=Assignment.Status.SUBMITTED, round=0)),
            skipped=Count("pk", filter=Q(status=Assignment.Status.SKIPPED)),
        )
    )
    return {row["item__project_id"]: row for row in rows}


def items_recount_rounds(*, items) -> None:
    """Recount the round counters of ``items`` from their assignments and judgments.

    For data written around the services (the demo, fixtures, repairs); the services keep them
    right as they go.
    """
    from .agreement import item_agreement
    from .models import Judgment

    items = list(items)
    rounds = {item.pk: item.round for item in items}
    live = Counter(
        item_id
        for item_id, round_number in Assignment.objects.filter(
            item_id__in=list(rounds), status__in=[Assignment.Status.ACTIVE, Assignment.Status.SUBMITTED]
        ).values_list("item_id", "round")
        if rounds[item_id] == round_number
    )
    judged: dict[int, list] = {}
    for judgment in Judgment.objects.filter(item_id__in=list(rounds)):
        if rounds[judgment.item_id] == judgment.round:
            judged.setdefault(judgment.item_id, []).append(judgment)
    projects = {project.pk: project for project in Project.objects.filter(items__in=items).distinct()}
    for item in items:
        project = projects[item.project_id]
        round_judgments = judged.get(item.pk, [])
        item.round_judged = len(round_judgments)
        item.round_assigned = max(live.get(item.pk, 0), item.round_judged)
        complete = item.status == Item.Status.IN_REVIEW and item.round_judged >= (
            item.round_wanted or project.overlap
        )
        item.round_disagreement = (
            item_agreement(round_judgments, project.criteria).disagreement if complete else None
        )
    Item.objects.bulk_update(items, ["round_assigned", "round_judged", "round_disagreement"])
