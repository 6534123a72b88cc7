"""Agreement of a project's judgments: per criterion (vote, class label, each rating), per round, broken down
by causal class or any other item field, including free item metadata (METER stages, CausalityCheck cells)."""

import hashlib
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from django.core.cache import cache
from django.db.models import Count, Max, QuerySet
from django.utils.translation import get_language
from django.utils.translation import gettext as _

from annotation.designs import design_for
from annotation.labels import criterion_label
from annotation.models import Item, Judgment, Project

from ..agreement import AgreementSummary, Bootstrap, RatingTable, agreement_summary

AGREEMENT_BOOTSTRAP = Bootstrap(resamples=1000, seed=0)
RATING_PREFIX = "rating:"
METADATA_PREFIX = "meta:"
MAX_SECTIONS = 30
CACHE_SECONDS = 120
_METADATA_SCAN = 5000

# Breakdown key → the judgment field that holds it.
_BREAKDOWN_FIELDS = {
    "round": "round",
    "causal_class": "item__causal_class",
    "origin": "item__origin",
    "topic": "item__topic__label",
    "answer_by": "item__answer_by",
}


@dataclass(frozen=True)
class Criterion:
    key: str
    label: str
    level: str
    categories: tuple


@dataclass
class AgreementRow:
    criterion: Criterion
    summary: AgreementSummary

    def as_dict(self) -> dict:
        return {"criterion": self.criterion.key, "label": self.criterion.label, **self.summary.as_dict()}


@dataclass
class AgreementSection:
    key: str
    label: str
    rows: list[AgreementRow]
    n_items: int
    n_judgments: int

    def as_dict(self) -> dict:
        return {"key": self.key, "label": self.label, "n_items": self.n_items, "n_judgments": self.n_judgments,
                "rows": [row.as_dict() for row in self.rows]}


def agreement_criteria(project: Project, rating_level: str = "ordinal") -> list[Criterion]:
    """What annotators judge: the vote, the causal class label, and each rating criterion of the project."""
    criteria = [
        Criterion("vote", _("Vote"), "nominal", tuple(value for value, _label in Judgment.Vote.choices)),
        Criterion("causal_class", _("Class label"), "nominal", tuple(project.label_set)),
    ]
    for spec in project.criteria:
        low, high = int(spec.get("min", 1)), int(spec.get("max", 5))
        criteria.append(
            Criterion(RATING_PREFIX + spec["key"], criterion_label(spec), rating_level,
                      tuple(range(low, high + 1)))
        )
    return criteria


def agreement_breakdowns(project: Project) -> list[tuple[str, str]]:
    """The fields agreement can be broken down by: item fields, then the keys of judged items' metadata."""
    options = [
        ("round", _("Review round")),
        ("causal_class", _("Causal class")),
        ("origin", _("Origin")),
        ("topic", _("Topic")),
        ("answer_by", _("Answer written by")),
    ]
    # The design's own breakdowns come first (METER: stage; CausalityCheck: cell), whether or not judged yet.
    design_fields = design_for(project).agreement_fields()
    options += [(METADATA_PREFIX + key, _("Design: %(key)s") % {"key": key}) for key in design_fields]
    judged = Item.objects.filter(project=project, judgments__isnull=False).exclude(metadata={}).distinct()
    keys: set[str] = set()
    for metadata in judged.values_list("metadata", flat=True)[:_METADATA_SCAN]:
        if isinstance(metadata, dict):
            keys.update(str(key) for key in metadata)
    keys -= set(design_fields)
    options += [(METADATA_PREFIX + key, _("Metadata: %(key)s") % {"key": key}) for key in sorted(keys)]
    return options


def project_agreement(
    project: Project,
    *,
    round: int | None = None,
    by: str | None = None,
    rating_level: str = "ordinal",
    items: QuerySet[Item] | None = None,
    bootstrap: Bootstrap | None = AGREEMENT_BOOTSTRAP,
    include_own: bool = False,
) -> list[AgreementSection]:
    """The first section covers all judgments in scope; with ``by``, one more section per value of that field.

    A unit is an item in one round (a revised answer is a new thing to judge); raters are annotators.
    ``items`` limits the judgments to those items (a release). Results are cached briefly, keyed by the
    judgments' fingerprint, so repeated page loads do not redo the bootstrap.
    """
    if by and by not in _BREAKDOWN_FIELDS and not by.startswith(METADATA_PREFIX):
        raise ValueError(f"unknown breakdown {by!r}")
    judgments = Judgment.objects.filter(item__project=project)
    if not include_own:  # an author judging their own answer is not an independent rater
        judgments = judgments.filter(own_answer=False)
    if round is not None:
        judgments = judgments.filter(round=round)
    if items is not None:
        judgments = judgments.filter(item__in=items.values("pk"))
    if items is not None:  # a release's figures are computed once, when it is cut
        return _compute(project, judgments, by, rating_level, bootstrap)
    key = _cache_key(project, judgments, round, by, rating_level, bootstrap)
    sections = cache.get(key)
    if sections is None:
        sections = _compute(project, judgments, by, rating_level, bootstrap)
        cache.set(key, sections, CACHE_SECONDS)
    return sections


def _compute(project, judgments, by, rating_level, bootstrap) -> list[AgreementSection]:
    fields = ["item_id", "round", "annotator__username", "ratings", "vote", "causal_class"]
    if by:
        fields.append(_BREAKDOWN_FIELDS.get(by, "item__metadata"))
    rows = list(judgments.order_by().values_list(*fields))
    criteria = agreement_criteria(project, rating_level)
    sections = [_section("", _("All judged items"), rows, criteria, bootstrap)]
    if not by:
        return sections
    groups: dict[str, list] = defaultdict(list)
    for row in rows:
        groups[_breakdown_value(row[-1], by, row[1])].append(row)
    ordered = sorted(groups.items(), key=lambda pair: (-len(pair[1]), pair[0]))[:MAX_SECTIONS]
    for value, group_rows in sorted(ordered, key=lambda pair: _natural(pair[0])):
        sections.append(_section(value, value, group_rows, criteria, bootstrap))
    return sections


def _section(key: str, label: str, rows: list, criteria: list[Criterion], bootstrap) -> AgreementSection:
    result = []
    for criterion in criteria:
        table = _rating_table(rows, criterion)
        result.append(AgreementRow(criterion, agreement_summary(table, level=criterion.level, bootstrap=bootstrap)))
    return AgreementSection(key=key, label=label, rows=result, n_items=len({row[0] for row in rows}),
                            n_judgments=len(rows))


def _rating_table(rows: Iterable[tuple], criterion: Criterion) -> RatingTable:
    judgments = [(f"{row[0]}:{row[1]}", row[2], _value(row, criterion)) for row in rows]
    seen = {value for _unit, _rater, value in judgments if value is not None}
    categories = list(criterion.categories)
    # Values outside the declared scale (an old label set, a changed range) are kept, not dropped.
    extra = sorted(seen - set(categories), key=str)
    if criterion.key.startswith(RATING_PREFIX):
        categories = sorted(set(categories) | seen)
    else:
        categories += extra
    return RatingTable.from_rows(judgments, categories=categories)


def _value(row: tuple, criterion: Criterion):
    if criterion.key == "vote":
        return row[4] or None
    if criterion.key == "causal_class":
        return row[5] or None
    rating = (row[3] or {}).get(criterion.key[len(RATING_PREFIX):]) if isinstance(row[3], dict) else None
    if isinstance(rating, bool) or rating in (None, ""):
        return None
    try:
        number = float(rating)
    except (TypeError, ValueError):
        return None
    return int(number) if number.is_integer() else number


def _breakdown_value(raw, by: str, round: int) -> str:
    """The value a judgment is grouped by. For item metadata, what the item recorded for the judgment's round
    (``metadata["rounds"]["2"]["stage"]``: METER's stages are rounds of the same item) wins over its current value."""
    if by.startswith(METADATA_PREFIX):
        key = by[len(METADATA_PREFIX):]
        metadata = raw if isinstance(raw, dict) else {}
        by_round = metadata.get("rounds", {}).get(str(round), {}) if isinstance(metadata.get("rounds"), dict) else {}
        raw = by_round[key] if isinstance(by_round, dict) and key in by_round else metadata.get(key)
    return "—" if raw in (None, "") else str(raw)


def _natural(text: str):
    return (0, int(text), "") if text.isdigit() else (1, 0, text)


def _cache_key(project, judgments, round, by, rating_level, bootstrap) -> str:
    fingerprint = judgments.order_by().aggregate(n=Count("id"), last=Max("id"), item_version=Max("item__version"))
    parts = [project.pk, project.label_set, project.criteria, round, by, rating_level,
             bootstrap.as_dict() if bootstrap else None, fingerprint, get_language()]
    return "agreement:" + hashlib.sha256(repr(parts).encode()).hexdigest()
