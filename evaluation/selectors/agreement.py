"""Agreement of a project's judgments: per criterion (vote, class label, each rating), per round, broken down
by causal class or any other item field, including free item metadata (METER stages, CausalityCheck cells)."""

import hashlib
from collections import defaultdict
from dataclasses import dataclass

import numpy as np
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.db.models import Count, Max, QuerySet
from django.utils.translation import get_language
from django.utils.translation import gettext as _

from annotation.designs import design_for
from annotation.models import Item, Judgment, Project

from ..agreement import AgreementSummary, Bootstrap, RatingTable, agreement_summary
from ..agreement.table import MISSING

AGREEMENT_BOOTSTRAP = Bootstrap(resamples=1000, seed=0)
RATING_PREFIX = "rating:"
METADATA_PREFIX = "meta:"
MAX_SECTIONS = 30
# Keys carry the judgments' state, so a cached figure is never stale; the timeout only frees space.
CACHE_SECONDS = 24 * 3600
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


def agreement_criteria(project: Project, rating_level: str | None = None) -> list[Criterion]:
    """What annotators judge: the vote, the causal class label, and each rating criterion of the project (at
    ``rating_level``, by default the design's)."""
    rating_level = rating_level or design_for(project).rating_level(project)
    criteria = [
        Criterion("vote", _("Vote"), "nominal", tuple(value for value, _label in Judgment.Vote.choices)),
        Criterion("causal_class", _("Class label"), "nominal", tuple(project.label_set)),
    ]
    for spec in project.criteria:
        low, high = int(spec.get("min", 1)), int(spec.get("max", 5))
        criteria.append(
            Criterion(RATING_PREFIX + spec["key"], spec.get("label") or spec["key"], rating_level,
                      tuple(range(low, high + 1)))
        )
    return criteria


def agreement_breakdowns(project: Project, state: "JudgmentsState | None" = None) -> list[tuple[str, str]]:
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
    state = state or judgments_state(project)
    key = "agreement-keys:" + hashlib.sha256(repr([project.pk, state.fingerprint(None)]).encode()).hexdigest()
    keys = cache.get(key)
    if keys is None:
        judged = Item.objects.filter(project=project, judgments__isnull=False).exclude(metadata={}).distinct()
        keys = set()
        for metadata in judged.values_list("metadata", flat=True)[:_METADATA_SCAN]:
            if isinstance(metadata, dict):
                keys.update(str(key) for key in metadata)
        cache.set(key, keys, CACHE_SECONDS)
    keys = set(keys) - set(design_fields)
    options += [(METADATA_PREFIX + key, _("Metadata: %(key)s") % {"key": key}) for key in sorted(keys)]
    return options


@dataclass(frozen=True)
class JudgmentsState:
    """What a project's judgments are now, per round: how many, the newest id, the newest item version.
    Judgments are never edited in place, so a new or removed judgment, or an edited item, changes it."""

    by_round: dict

    @property
    def rounds(self) -> list[int]:
        return sorted(self.by_round)

    def fingerprint(self, round: int | None) -> tuple:
        if round is not None:
            return (round, self.by_round.get(round))
        return tuple(sorted(self.by_round.items()))


def judgments_state(project: Project) -> JudgmentsState:
    """One grouped query; every cached agreement figure is keyed by the state of the rounds it covers."""
    rows = (Judgment.objects.filter(item__project=project).order_by().values("round")
            .annotate(n=Count("id"), last=Max("id"), item_version=Max("item__version")))
    return JudgmentsState({row["round"]: (row["n"], row["last"], row["item_version"]) for row in rows})


def project_agreement(
    project: Project,
    *,
    round: int | None = None,
    by: str | None = None,
    rating_level: str | None = None,
    items: QuerySet[Item] | None = None,
    bootstrap: Bootstrap | None = AGREEMENT_BOOTSTRAP,
    state: JudgmentsState | None = None,
) -> list[AgreementSection]:
    """The first section covers all judgments in scope; with ``by``, one more section per value of that field.

    A unit is an item in one round (a revised answer is a new thing to judge); raters are annotators. Ratings
    are taken at ``rating_level``, by default the design's (``ProjectDesign.rating_level``). ``items`` limits the
    judgments to those items (a release, computed once when it is cut, never cached).

    Each criterion of each section is cached on its own, keyed by the state of the rounds in scope: a new
    judgment in round 2 leaves round 1's figures cached, and switching the rating level recomputes only the
    rating criteria. A page whose judgments did not change costs one grouped query and the cache reads.
    """
    if by and by not in _BREAKDOWN_FIELDS and not by.startswith(METADATA_PREFIX):
        raise ValueError(f"unknown breakdown {by!r}")
    rating_level = rating_level or design_for(project).rating_level(project)
    judgments = Judgment.objects.filter(item__project=project)
    if round is not None:
        judgments = judgments.filter(round=round)
    criteria = agreement_criteria(project, rating_level)
    if items is not None:
        judgments = judgments.filter(item__in=items.values("pk"))
        rows = _rows(judgments, by)
        return [_section(key, label, section_rows, criteria, bootstrap) for key, label, section_rows in
                _split(rows, by)]

    state = state or judgments_state(project)
    scope = agreement_key(project, round, by, bootstrap, state)
    index = cache.get(scope)
    summaries = {}
    if index is not None:
        keys = {(key, criterion): _summary_key(scope, key, criterion) for key, *_rest in index for criterion in criteria}
        found = cache.get_many(list(keys.values()))
        summaries = {pair: found[cache_key] for pair, cache_key in keys.items() if cache_key in found}
    if index is None or len(summaries) < len(index) * len(criteria):
        rows = _rows(judgments, by)
        parts = _split(rows, by)
        index = [(key, label, len({row[0] for row in section_rows}), len(section_rows))
                 for key, label, section_rows in parts]
        fresh = {}
        for key, _label, section_rows in parts:
            missing = [criterion for criterion in criteria if (key, criterion) not in summaries]
            for criterion, summary in _summaries(section_rows, missing, bootstrap).items():
                fresh[(key, criterion)] = summary
        summaries.update(fresh)
        cache.set(scope, index, CACHE_SECONDS)
        cache.set_many({_summary_key(scope, key, criterion): summary for (key, criterion), summary in fresh.items()},
                       CACHE_SECONDS)
    return [
        AgreementSection(key=key, label=label, n_items=n_items, n_judgments=n_judgments,
                         rows=[AgreementRow(criterion, summaries[(key, criterion)]) for criterion in criteria])
        for key, label, n_items, n_judgments in index
    ]


def _rows(judgments, by: str | None) -> list[tuple]:
    """(unit, round, rater, ratings, vote, class[, breakdown value]) per judgment. Item fields a breakdown needs
    are read once per item, not once per judgment (an ExpliCa item's metadata repeated 15 times cost seconds)."""
    rows = list(judgments.order_by().values_list("item_id", "round", "annotator_id", "ratings", "vote",
                                                 "causal_class"))
    names = dict(get_user_model().objects.filter(pk__in={row[2] for row in rows}).values_list("pk", "username"))
    rows = [(item_id, round_, names[rater], *rest) for item_id, round_, rater, *rest in rows]
    if not by:
        return rows
    field = "round" if by == "round" else _BREAKDOWN_FIELDS.get(by, "item__metadata").removeprefix("item__")
    if field == "round":
        return [(*row, row[1]) for row in rows]
    values = dict(Item.objects.filter(pk__in={row[0] for row in rows}).values_list("pk", field))
    return [(*row, values[row[0]]) for row in rows]


def _split(rows: list[tuple], by: str | None) -> list[tuple[str, str, list]]:
    """(key, label, rows) of the section of all judgments and, with ``by``, of each value of that field."""
    parts = [("", _("All judged items"), rows)]
    if not by:
        return parts
    groups: dict[str, list] = defaultdict(list)
    for row in rows:
        groups[_breakdown_value(row[-1], by, row[1])].append(row)
    ordered = sorted(groups.items(), key=lambda pair: (-len(pair[1]), pair[0]))[:MAX_SECTIONS]
    return parts + [(value, value, group_rows) for value, group_rows in sorted(ordered, key=lambda pair: _natural(pair[0]))]


def _section(key: str, label: str, rows: list, criteria: list[Criterion], bootstrap) -> AgreementSection:
    summaries = _summaries(rows, criteria, bootstrap)
    return AgreementSection(key=key, label=label, rows=[AgreementRow(c, summaries[c]) for c in criteria],
                            n_items=len({row[0] for row in rows}), n_judgments=len(rows))


def _summaries(rows: list, criteria: list[Criterion], bootstrap) -> dict[Criterion, AgreementSummary]:
    """Each criterion's statistics on the same units (item in a round) and raters, indexed once for all."""
    if not criteria:
        return {}
    index = _index(rows)
    return {criterion: agreement_summary(_rating_table(rows, criterion, *index), level=criterion.level,
                                         bootstrap=bootstrap)
            for criterion in criteria}


def criterion_table(rows: list, criterion: Criterion) -> RatingTable:
    """The raters × units table of one criterion of judgment rows (item, round, rater, ratings, vote, class)."""
    return _rating_table(rows, criterion, *_index(rows))


def _index(rows: list) -> tuple[list, list, np.ndarray, np.ndarray]:
    """Units (an item in a round) and raters in order of appearance, and each row's unit and rater."""
    unit_index: dict = {}
    rater_index: dict = {}
    unit_codes = np.fromiter((unit_index.setdefault((row[0], row[1]), len(unit_index)) for row in rows),
                             dtype=np.int64, count=len(rows))
    rater_codes = np.fromiter((rater_index.setdefault(row[2], len(rater_index)) for row in rows),
                              dtype=np.int64, count=len(rows))
    return [f"{item}:{round_}" for item, round_ in unit_index], list(rater_index), unit_codes, rater_codes


def _rating_table(rows: list, criterion: Criterion, units: list, raters: list, unit_codes: np.ndarray,
                  rater_codes: np.ndarray) -> RatingTable:
    values = [_value(row, criterion) for row in rows]
    seen = {value for value in values if value is not None}
    categories = list(criterion.categories)
    # Values outside the declared scale (an old label set, a changed range) are kept, not dropped.
    extra = sorted(seen - set(categories), key=str)
    if criterion.key.startswith(RATING_PREFIX):
        categories = sorted(set(categories) | seen)
        source = _("the criterion's scale in the project settings")
        if extra:
            source = _("the criterion's scale in the project settings, widened to values given outside it")
    else:
        categories += extra
        source = _("the project's choices") if not extra else _("the project's choices and older values")
    code_of = {value: code for code, value in enumerate(categories)}
    value_codes = np.fromiter((MISSING if value is None else code_of[value] for value in values), dtype=np.int64,
                              count=len(values))
    judged = value_codes != MISSING
    codes = np.full((len(raters), len(units)), MISSING, dtype=np.int64)
    # One judgment per annotator, item and round is a database constraint, so no cell is written twice.
    codes[rater_codes[judged], unit_codes[judged]] = value_codes[judged]
    return RatingTable(units=units, raters=raters, categories=categories, codes=codes, scale_source=source)


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


def agreement_key(project, round, by, bootstrap, state: JudgmentsState, *extra) -> str:
    """The cache key of a project's agreement in one scope, as the judgments in it are now."""
    parts = [project.pk, project.label_set, project.criteria, round, by, bootstrap.as_dict() if bootstrap else None,
             state.fingerprint(round), get_language(), *extra]
    return "agreement:" + hashlib.sha256(repr(parts).encode()).hexdigest()


def _summary_key(scope: str, section: str, criterion: Criterion) -> str:
    parts = [section, criterion.key, criterion.level, criterion.categories]
    return f"{scope}:" + hashlib.sha256(repr(parts).encode()).hexdigest()[:24]
