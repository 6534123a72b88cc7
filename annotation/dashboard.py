"""Reads for the project dashboard: status by round, class balance, each annotator's work and agreement.

Every figure is one grouped query (agreement with the majority reads the project's judgments
once and counts in Python); nothing runs per row.
"""

from collections import defaultdict
from datetime import timedelta

from django.contrib.auth import get_user_model
from django.db.models import Count, Q
from django.db.models.functions import TruncDate
from django.utils import timezone
from django.utils.translation import gettext as _

from .agreement import majority
from .charts import column_chart, hbar_chart
from .models import Assignment, Item, Judgment, Membership, Project
from .selectors import class_status_table

Status = Item.Status


def status_by_round(project: Project) -> dict:
    """A table of round × status counts, and the same as stacked bars."""
    cells: dict[int, dict[str, int]] = defaultdict(dict)
    for round_number, status, n in (
        project.items.values_list("round", "status").annotate(n=Count("id")).order_by()
    ):
        cells[round_number][status] = n
    rows = [
        {
            "round": round_number,
            "counts": [cells[round_number].get(value, 0) for value, _label in Status.choices],
            "total": sum(cells[round_number].values()),
        }
        for round_number in sorted(cells)
    ]
    chart = hbar_chart(
        [{"label": _("Round %(n)s") % {"n": row["round"]}, "values": cells[row["round"]]} for row in rows],
        series=list(Status.choices),
    )
    return {"rows": rows, "chart": chart}


def class_balance(project: Project, *, curator: bool = True) -> dict:
    """Per causal class: gold, in review and the rest (as the reader sees them), against the project's target
    (the marker)."""
    rows = class_status_table(project, curator=curator)
    index = {value: position for position, (value, _label) in enumerate(Status.choices)}
    series = [("gold", _("Gold")), ("in_review", _("In review")), ("other", _("Pending or needing revision"))]
    chart_rows = []
    for row in rows:
        by_status = row["by_status"]
        gold = by_status[index[Status.APPROVED]]
        in_review = by_status[index[Status.IN_REVIEW]]
        other = by_status[index[Status.PENDING]] + by_status[index[Status.NEEDS_REVISION]]
        target = row["target"]
        note = _("%(gold)s of %(target)s gold") % {"gold": gold, "target": target} if target else ""
        chart_rows.append(
            {
                "label": row["label"],
                "values": {"gold": gold, "in_review": in_review, "other": other},
                "marker": target,
                "note": note,
            }
        )
    return {"rows": rows, "chart": hbar_chart(chart_rows, series=series)}


def annotator_stats(project: Project) -> dict:
    """Each annotator's throughput (all time and the last 7 days) and agreement with the majority.

    Agreement with the majority: of the rounds with at least two judgments and a majority vote
    (more than half), the share where the annotator voted with it; the same for class labels.
    """
    week_ago = timezone.now() - timedelta(days=7)
    work = {
        row["annotator_id"]: row
        for row in Assignment.objects.filter(item__project=project)
        .values("annotator_id")
        .annotate(
            judged=Count("pk", filter=Q(status=Assignment.Status.SUBMITTED, round__gt=0)),
            judged_week=Count(
                "pk", filter=Q(status=Assignment.Status.SUBMITTED, round__gt=0, finished_at__gte=week_ago)
            ),
            answered=Count("pk", filter=Q(status=Assignment.Status.SUBMITTED, round=0)),
            skipped=Count("pk", filter=Q(status=Assignment.Status.SKIPPED)),
            expired=Count("pk", filter=Q(status=Assignment.Status.EXPIRED)),
        )
        .order_by()
    }
    rounds: dict[tuple[int, int], list[tuple[int, str, str]]] = defaultdict(list)
    judgments = Judgment.objects.filter(item__project=project).values_list(
        "item_id", "round", "annotator_id", "vote", "causal_class"
    )
    for item_id, round_number, annotator_id, vote, causal_class in judgments.iterator(chunk_size=5000):
        rounds[item_id, round_number].append((annotator_id, vote, causal_class))
    agree = defaultdict(lambda: {"vote": [0, 0], "class": [0, 0]})
    for judged in rounds.values():
        if len(judged) < 2:
            continue
        for field, position in (("vote", 1), ("class", 2)):
            winner = majority([row[position] for row in judged])
            if winner is None:
                continue
            for row in judged:
                tally = agree[row[0]][field]
                tally[0] += row[position] == winner
                tally[1] += 1

    member_ids = set(
        Membership.objects.filter(project=project, role=Membership.Role.ANNOTATOR).values_list(
            "user_id", flat=True
        )
    )
    users = get_user_model().objects.filter(pk__in=member_ids | set(work)).order_by("username")
    people = []
    for user in users:
        row = work.get(user.pk, {})
        vote_agree, class_agree = agree[user.pk]["vote"], agree[user.pk]["class"]
        people.append(
            {
                "user": user,
                "judged": row.get("judged", 0),
                "judged_week": row.get("judged_week", 0),
                "answered": row.get("answered", 0),
                "skipped": row.get("skipped", 0),
                "expired": row.get("expired", 0),
                "vote_agreement": vote_agree[0] / vote_agree[1] if vote_agree[1] else None,
                "vote_compared": vote_agree[1],
                "class_agreement": class_agree[0] / class_agree[1] if class_agree[1] else None,
            }
        )
    throughput = hbar_chart(
        [
            {
                "label": person["user"].get_username(),
                "values": {"judged": person["judged"], "answered": person["answered"]},
            }
            for person in people
        ],
        series=[("judged", _("Judgments")), ("answered", _("Answers written"))],
    )
    agreement = hbar_chart(
        [
            {
                "label": person["user"].get_username(),
                "values": {"agree": round(100 * (person["vote_agreement"] or 0))},
                "note": "" if person["vote_agreement"] is not None else _("no majority yet"),
            }
            for person in people
        ],
        series=[("agree", _("Votes with the majority (%)"))],
        max_value=100,
    )
    return {"people": people, "throughput_chart": throughput, "agreement_chart": agreement}


def judgments_by_day(project: Project, days: int = 14) -> dict:
    """Judgments submitted per day over the last ``days`` days, as columns."""
    today = timezone.localdate()
    start = today - timedelta(days=days - 1)
    counts = dict(
        Judgment.objects.filter(item__project=project, created_at__date__gte=start)
        .annotate(day=TruncDate("created_at"))
        .values_list("day")
        .annotate(n=Count("id"))
        .order_by()
    )
    points = [
        ((start + timedelta(days=n)).strftime("%d/%m"), counts.get(start + timedelta(days=n), 0))
        for n in range(days)
    ]
    return column_chart(points)
