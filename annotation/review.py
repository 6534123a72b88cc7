"""Reads for the curator: the review queue, one item's round side by side, and an item's history.

Each function runs a fixed number of queries, whatever the number of items or judgments.
"""

from collections import defaultdict
from dataclasses import dataclass, field

from django.db.models import QuerySet

from .agreement import ItemAgreement, item_agreement
from .diffs import snapshot_diff
from .labels import criteria_for_reader
from .models import Assignment, CurationDecision, Item, Judgment, Project, Revision
from .services.revisions import UNDOABLE_FIELDS


@dataclass
class RoundReview:
    """An item's round as the curator sees it."""

    item: Item
    round: int
    judgments: list[Judgment]
    agreement: ItemAgreement
    edits: dict[int, list[dict]] = field(default_factory=dict)  # annotator id → their edits as diffs

    @property
    def rating_rows(self) -> list[dict]:
        """One row per criterion: its spread and each judgment's rating, in column order."""
        return [
            {"spread": spread, "cells": [judgment.ratings.get(spread.key) for judgment in self.judgments]}
            for spread in self.agreement.criteria
        ]

    @property
    def columns(self) -> list[dict]:
        """One column per judgment, with the annotator's ratings in the project's criterion order."""
        keys = [criterion.key for criterion in self.agreement.criteria]
        return [
            {
                "judgment": judgment,
                "ratings": [judgment.ratings.get(key) for key in keys],
                "edits": self.edits.get(judgment.annotator_id, []),
            }
            for judgment in self.judgments
        ]


def complete_rounds(project: Project) -> QuerySet[Item]:
    """Items in review whose current round has all its judgments, most disagreement first."""
    return Item.objects.filter(
        project=project, status=Item.Status.IN_REVIEW, round_disagreement__isnull=False
    ).order_by("-round_disagreement", "id")


def queue_neighbours(project: Project, item: Item) -> dict[str, int | None]:
    """The items before and after this one in the review queue (the first of the queue when it is not in it)."""
    ids = list(complete_rounds(project).values_list("pk", flat=True))
    if item.pk not in ids:
        return {"previous": None, "next": ids[0] if ids else None}
    position = ids.index(item.pk)
    return {
        "previous": ids[position - 1] if position > 0 else None,
        "next": ids[position + 1] if position + 1 < len(ids) else None,
    }


def round_reviews(project: Project, items: list[Item]) -> list[RoundReview]:
    """The current round of each item with its judgments and agreement (one query for all judgments)."""
    by_item: dict[int, list[Judgment]] = defaultdict(list)
    rounds = {item.pk: item.round for item in items}
    judgments = (
        Judgment.objects.filter(item_id__in=list(rounds)).select_related("annotator").order_by("created_at")
    )
    for judgment in judgments:
        if judgment.round == rounds[judgment.item_id]:
            by_item[judgment.item_id].append(judgment)
    return [
        RoundReview(
            item=item,
            round=item.round,
            judgments=by_item[item.pk],
            agreement=item_agreement(by_item[item.pk], criteria_for_reader(project.criteria)),
        )
        for item in items
    ]


def review_queue(project: Project, *, offset: int = 0, limit: int = 50) -> tuple[list[RoundReview], int]:
    """A page of the review queue and the queue's length."""
    items = complete_rounds(project)
    page = list(items[offset : offset + limit])
    return round_reviews(project, page), items.count()


def item_round_review(project: Project, item: Item, round_number: int | None = None) -> RoundReview:
    """One round of an item, side by side: judgments, each annotator's edits as diffs, agreement."""
    round_number = item.round if round_number is None else round_number
    judgments = list(
        Judgment.objects.filter(item=item, round=round_number)
        .select_related("annotator")
        .order_by("created_at")
    )
    revisions = list(Revision.objects.filter(item=item).order_by("number"))
    edits: dict[int, list[dict]] = defaultdict(list)
    previous = None
    for revision in revisions:
        if revision.round == round_number and revision.kind == Revision.Kind.EDIT and revision.author_id:
            edits[revision.author_id].append(
                {
                    "revision": revision,
                    "changes": snapshot_diff(previous.snapshot if previous else None, revision.snapshot),
                }
            )
        previous = revision
    return RoundReview(
        item=item,
        round=round_number,
        judgments=judgments,
        agreement=item_agreement(judgments, criteria_for_reader(project.criteria)),
        edits=dict(edits),
    )


def round_progress(item: Item) -> dict:
    """How far the item's current round is: submitted and open assignments."""
    counts = defaultdict(int)
    for status in Assignment.objects.filter(item=item, round=item.round).values_list("status", flat=True):
        counts[status] += 1
    return {"submitted": counts[Assignment.Status.SUBMITTED], "active": counts[Assignment.Status.ACTIVE]}


def item_history(project: Project, item: Item) -> list[dict]:
    """The item's life by round: revisions with diffs and who or which model call made them, the round's
    judgment count and majority, skips, and the curator's decision. Oldest round first."""
    revisions = list(Revision.objects.filter(item=item).select_related("author").order_by("number"))
    decisions = {d.round: d for d in CurationDecision.objects.filter(item=item).select_related("curator")}
    judgments: dict[int, list[Judgment]] = defaultdict(list)
    for judgment in Judgment.objects.filter(item=item).order_by("created_at"):
        judgments[judgment.round].append(judgment)
    skips: dict[int, list[Assignment]] = defaultdict(list)
    for assignment in Assignment.objects.filter(item=item, status=Assignment.Status.SKIPPED).select_related(
        "annotator"
    ):
        skips[assignment.round].append(assignment)

    entries: dict[int, list[dict]] = defaultdict(list)
    previous = None
    for revision in revisions:
        entries[revision.round].append(
            {
                "revision": revision,
                "changes": snapshot_diff(previous.snapshot if previous else None, revision.snapshot),
                "undoable": previous is not None
                and revision.kind != Revision.Kind.CREATED
                and bool(set(revision.changed_fields or []) & set(UNDOABLE_FIELDS)),
            }
        )
        previous = revision
    rounds = sorted(set(entries) | set(decisions) | set(judgments) | set(skips) | {item.round})
    criteria = criteria_for_reader(project.criteria)
    return [
        {
            "round": number,
            "revisions": entries.get(number, []),
            "judgments": len(judgments.get(number, [])),
            "agreement": item_agreement(judgments.get(number, []), criteria)
            if judgments.get(number)
            else None,
            "skips": skips.get(number, []),
            "decision": decisions.get(number),
            "current": number == item.round,
        }
        for number in rounds
    ]
