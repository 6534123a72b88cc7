"""Reads for pages and the API: one query per figure, never one per row."""

from collections import Counter

from django.db.models import Count, Q, QuerySet

from .control_items import with_status_seen
from .labels import class_label
from .models import ImportBatch, Item, Membership, Project
from .permissions import projects_for_user


def projects_overview(user) -> QuerySet[Project]:
    """The user's projects with item counts by status, in one query; where the user is an annotator, control
    items count as they see them, in review."""
    Status = Item.Status
    control = Q(items__status=Status.APPROVED, items__control_answers__isnull=False)
    sees_truth = Q(pk__in=_curated_by(user))
    # By id, so the membership join that picks the user's projects does not also limit the member count.
    return Project.objects.filter(pk__in=projects_for_user(user).values("pk")).annotate(
        n_items=Count("items", distinct=True),
        n_gold=Count(
            "items", filter=Q(items__status=Status.APPROVED) & (~control | sees_truth), distinct=True
        ),
        n_in_review=Count(
            "items", filter=Q(items__status=Status.IN_REVIEW) | (control & ~sees_truth), distinct=True
        ),
        n_members=Count("memberships", distinct=True),
    )


def _curated_by(user):
    """The ids of the projects whose items ``user`` sees as they are (curator, owner, superuser)."""
    if user.is_superuser:
        return Project.objects.values("pk")
    return Membership.objects.filter(
        user=user, role__in=[Membership.Role.CURATOR, Membership.Role.OWNER]
    ).values("project_id")


def status_counts(project: Project, *, curator: bool = True) -> list[dict]:
    """Items by status, as the reader sees them (an annotator sees control items in review)."""
    items = with_status_seen(project.items.order_by(), curator=curator)
    counts = dict(items.values_list("status_seen").annotate(n=Count("id")))
    return [
        {"status": value, "label": label, "count": counts.get(value, 0)}
        for value, label in Item.Status.choices
    ]


def class_status_table(project: Project, *, curator: bool = True) -> list[dict]:
    """Rows of causal class × status counts (as the reader sees the statuses), with the project's target per
    class."""
    cells: dict[str, dict[str, int]] = {}
    items = with_status_seen(project.items.order_by(), curator=curator)
    for causal_class, status, n in items.values_list("causal_class", "status_seen").annotate(n=Count("id")):
        cells.setdefault(causal_class or "", {})[status] = n
    labels = list(project.label_set) + sorted(key for key in cells if key not in project.label_set)
    rows = []
    for label in labels:
        by_status = cells.get(label, {})
        rows.append(
            {
                "key": label,
                "label": class_label(project, label) if label else "—",
                "by_status": [by_status.get(value, 0) for value, _ in Item.Status.choices],
                "total": sum(by_status.values()),
                "gold": by_status.get(Item.Status.APPROVED, 0),
                "target": project.class_targets.get(label),
            }
        )
    return rows


def members_by_role(project: Project) -> list[dict]:
    """[{"role": label, "members": [membership, ...]}, ...] in the order annotator, curator, owner."""
    by_role: dict[str, list] = {role: [] for role, _ in Membership.Role.choices}
    for membership in project.memberships.select_related("user").order_by("user__username"):
        by_role[membership.role].append(membership)
    return [{"role": label, "members": by_role[role]} for role, label in Membership.Role.choices]


def recent_imports(project: Project, limit: int = 20) -> QuerySet[ImportBatch]:
    return project.imports.select_related("created_by")[:limit]


def class_funnel(project: Project, *, curator: bool = True) -> list[dict]:
    """The paper's Table 3 for the project, per class: items whose reference answer a person wrote and items
    whose answer a model wrote (generated, or imported with the model named), gold and all (not rejected);
    gold as the reader sees it (an annotator sees control items in review)."""
    By = Item.AnswerBy
    paths = {By.HUMAN: "human", By.MODEL: "model"}
    cells: dict[str, dict] = {}
    rows = (
        with_status_seen(project.items.exclude(status=Item.Status.REJECTED), curator=curator)
        .values_list("causal_class", "answer_by", "status_seen", "origin")
        .annotate(n=Count("id"))
        .order_by()
    )
    for causal_class, answer_by, status, origin, n in rows:
        path = paths.get(answer_by, "unanswered")
        cell = cells.setdefault(causal_class or "", {})
        cell[path] = cell.get(path, 0) + n
        # where the question came from, next to who answered it
        where = "generated" if origin == Item.Origin.GENERATED else "natural"
        cell[where] = cell.get(where, 0) + n
        if status == Item.Status.APPROVED:
            cell[f"{path}_gold"] = cell.get(f"{path}_gold", 0) + n
    labels = list(project.label_set) + sorted(key for key in cells if key not in project.label_set)
    table = []
    for label in labels:
        cell = cells.get(label, {})
        gold = sum(cell.get(f"{path}_gold", 0) for path in ("human", "model", "unanswered"))
        table.append(
            {
                "key": label,
                "label": class_label(project, label) if label else "—",
                "gold": gold,
                "target": project.class_targets.get(label),
                "count": sum(cell.get(path, 0) for path in ("human", "model", "unanswered")),
                **{
                    key: cell.get(key, 0)
                    for key in (
                        "human",
                        "human_gold",
                        "model",
                        "model_gold",
                        "unanswered",
                        "natural",
                        "generated",
                    )
                },
            }
        )
    totals = {
        key: sum(row[key] for row in table)
        for key in (
            "gold",
            "count",
            "human",
            "human_gold",
            "model",
            "model_gold",
            "unanswered",
            "natural",
            "generated",
        )
    }
    return (
        table
        + [
            {
                "label": "total",
                "is_total": True,
                "target": sum(project.class_targets.values()) or None,
                **totals,
            }
        ]
        if table
        else []
    )


def origin_counts(project: Project) -> dict[str, dict[str, int]]:
    """Table 3's other half as the API gives it: per class, questions (not rejected) that are natural and those a
    model generated."""
    return {
        row["key"]: {key: row[key] for key in ("natural", "generated")}
        for row in class_funnel(project)
        if not row.get("is_total")
    }


def answer_counts(project: Project) -> dict[str, dict[str, int]]:
    """Table 3 as the API gives it: per class, items (not rejected) and who answered them."""
    return {
        row["key"]: {key: row[key] for key in ("count", "human", "model", "unanswered")}
        for row in class_funnel(project)
        if not row.get("is_total")
    }


def import_dropped_counts(batch) -> dict:
    """The import's dropped rows counted by stage ("by_stage"), and how many of them were counted past the
    sample of their reason and not stored ("not_stored", "sample": rows kept per reason). An import counts its
    dropped rows as it stores them; for one without those counts, its stored rows are counted."""
    counted = (batch.funnel or {}).get("dropped") or {}
    if "by_reason" not in counted:
        by_stage = dict(batch.dropped_rows.values_list("stage").annotate(n=Count("id")))
        return {"by_stage": by_stage, "not_stored": 0, "sample": 0}
    by_stage = Counter()
    for reason, n in counted["by_reason"].items():
        by_stage[reason.partition(":")[0]] += n
    return {
        "by_stage": dict(by_stage),
        "not_stored": counted.get("not_stored", 0),
        "sample": counted.get("sample", 0),
    }
