"""Agreement of a project's judgments: per criterion (vote, class label, each rating), per round, broken down
by causal class or any other item field, including free item metadata (METER stages, CausalityCheck cells)."""

import hashlib
from collections import defaultdict
from dataclasses import dataclass

import numpy as np
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.db.models import Count, Exists, Max, OuterRef, QuerySet, TextField
from django.db.models.fields.json import KeyTextTransform
from django.db.models.functions import Cast
from django.utils.translation import get_language
from django.utils.translation import gettext as _

from annotation.designs import design_for
from annotation.labels import criterion_label
from annotation.models import Item, Judgment, Project
from core.db.json import json_object_keys

from ..agreement import AgreementSummary, Bootstrap, RatingTable, agreement_summary
from ..agreement.table import MISSING
from ..releases.records import json_value

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
        return {
            "key": self.key,
            "label": self.label,
            "n_items": self.n_items,
            "n_judgments": self.n_judgments,
            "rows": [row.as_dict() for row in self.rows],
        }


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
            Criterion(
                RATING_PREFIX + spec["key"], criterion_label(spec), rating_level, tuple(range(low, high + 1))
            )
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
        keys = _judged_metadata_keys(project)
        cache.set(key, keys, CACHE_SECONDS)
    keys = set(keys) - set(design_fields)
    options += [(METADATA_PREFIX + key, _("Metadata: %(key)s") % {"key": key}) for key in sorted(keys)]
    return options


def _judged_metadata_keys(project: Project) -> set[str]:
    # Listed by the database where it can: reading every item's metadata into Python cost ExpliCa's page a
    # tenth of a second each time a judgment arrived.
    judged_items = Item.objects.filter(project=project).filter(
        Exists(Judgment.objects.filter(item=OuterRef("pk")))
    )
    listed = json_object_keys(judged_items, "metadata")
    if listed is not None:
        return listed
    judged = Item.objects.filter(project=project, judgments__isnull=False).exclude(metadata={}).distinct()
    keys = set()
    for metadata in judged.values_list("metadata", flat=True)[:_METADATA_SCAN]:
        if isinstance(metadata, dict):
            keys.update(str(key) for key in metadata)
    return keys


@dataclass(frozen=True)
class JudgmentsState:
    """What a project's judgments are now, per round: how many, the newest id, the newest item version, the
    latest change of a submitted judgment (``judgment_change``): a new, changed or removed judgment, or an edited
    item, changes it."""

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
    rows = (
        Judgment.objects.filter(item__project=project)
        .order_by()
        .values("round")
        .annotate(n=Count("id"), last=Max("id"), item_version=Max("item__version"), changed=Max("changed_at"))
    )
    return JudgmentsState(
        {row["round"]: (row["n"], row["last"], row["item_version"], row["changed"]) for row in rows}
    )


def project_agreement(
    project: Project,
    *,
    round: int | None = None,
    by: str | None = None,
    rating_level: str | None = None,
    items: QuerySet[Item] | None = None,
    bootstrap: Bootstrap | None = AGREEMENT_BOOTSTRAP,
    state: JudgmentsState | None = None,
    include_own: bool = False,
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
    if not include_own:  # an author judging their own answer is not an independent rater
        judgments = judgments.filter(own_answer=False)
    if round is not None:
        judgments = judgments.filter(round=round)
    criteria = agreement_criteria(project, rating_level)
    if items is not None:
        judgments = judgments.filter(item__in=items.values("pk"))
        judged = _Judged.load(project, judgments, by)
        return [
            AgreementSection(
                key=key,
                label=label,
                n_items=n_items,
                n_judgments=n_judgments,
                rows=[AgreementRow(c, s) for c, s in judged.summaries(units, criteria, bootstrap).items()],
            )
            for key, label, units, n_items, n_judgments in judged.sections()
        ]

    state = state or judgments_state(project)
    scope = "sections:" + agreement_key(project, round, by, bootstrap, state, include_own)
    # The scope's sections as the judgments are now, each with the fingerprint of each criterion's table; a
    # figure is cached under its table's fingerprint, so after a new judgment only the sections whose tables it
    # changed are computed again (ExpliCa: the item's connective and "all", not the other connectives).
    index = cache.get(scope)
    summaries = {}
    if index is not None:
        keys = {
            (key, criterion): _summary_key(tables[criterion.key], criterion, bootstrap)
            for key, _label, _n_items, _n_judgments, tables in index
            for criterion in criteria
        }
        found = cache.get_many(list(keys.values()))
        summaries = {pair: found[cache_key] for pair, cache_key in keys.items() if cache_key in found}
    if index is None or len(summaries) < len(index) * len(criteria):
        judged = _Judged.load(project, judgments, by)
        index, fresh = [], {}
        for key, label, units, n_items, n_judgments in judged.sections():
            tables = {criterion: judged.section_table(criterion, units) for criterion in criteria}
            fingerprints = {criterion.key: _table_fingerprint(table) for criterion, table in tables.items()}
            index.append((key, label, n_items, n_judgments, fingerprints))
            keys = {
                criterion: _summary_key(fingerprints[criterion.key], criterion, bootstrap)
                for criterion in criteria
                if (key, criterion) not in summaries
            }
            found = cache.get_many(list(keys.values()))
            for criterion, cache_key in keys.items():
                summary = found.get(cache_key)
                if summary is None:
                    summary = agreement_summary(tables[criterion], level=criterion.level, bootstrap=bootstrap)
                    fresh[cache_key] = summary
                summaries[(key, criterion)] = summary
        cache.set(scope, index, CACHE_SECONDS)
        cache.set_many(fresh, CACHE_SECONDS)
    return [
        AgreementSection(
            key=key,
            label=label,
            n_items=n_items,
            n_judgments=n_judgments,
            rows=[AgreementRow(criterion, summaries[(key, criterion)]) for criterion in criteria],
        )
        for key, label, n_items, n_judgments, _tables in index
    ]


class _Judged:
    """A scope's judgments as columns: each judgment's unit (an item in a round) and rater, the raw value of each
    criterion, and each unit's breakdown value. Built with a handful of array operations and one dictionary
    lookup per judgment and criterion, so 72,000 judgments take a fraction of a second."""

    def __init__(self, unit_items, unit_rounds, unit_of, rater_of, raters, raw, unit_groups):
        self.unit_items, self.unit_rounds = unit_items, unit_rounds
        self.unit_of, self.rater_of, self.raters = unit_of, rater_of, raters
        self.raw = raw  # criterion key → list of raw values, one per judgment
        self.unit_groups = unit_groups  # breakdown value of each unit, or None
        self.units = [f"{item}:{round_}" for item, round_ in zip(unit_items.tolist(), unit_rounds.tolist())]
        self._codes: dict = {}

    @classmethod
    def load(cls, project: Project, judgments, by: str | None) -> "_Judged":
        keys = [spec["key"] for spec in project.criteria]
        # Each rating is read as text by the database: decoding 72,000 JSON objects in Python cost seconds.
        extracts = {f"rating_{index}": KeyTextTransform(key, "ratings") for index, key in enumerate(keys)}
        rows = list(
            judgments.order_by()
            .annotate(**extracts)
            .values_list("item_id", "round", "annotator_id", "vote", "causal_class", *extracts)
        )
        columns = list(zip(*rows)) if rows else [()] * (5 + len(keys))
        items, rounds, annotators = (np.array(columns[i], dtype=np.int64) for i in range(3))
        unit_keys = items * (int(rounds.max(initial=0)) + 1) + rounds
        unit_of, unit_first = _first_appearance(unit_keys)
        rater_of, rater_first = _first_appearance(annotators)
        names = dict(
            get_user_model()
            .objects.filter(pk__in=set(annotators[rater_first].tolist()))
            .values_list("pk", "username")
        )
        raw = {"vote": columns[3], "causal_class": columns[4]}
        raw.update({RATING_PREFIX + key: columns[5 + index] for index, key in enumerate(keys)})
        unit_items, unit_rounds = items[unit_first], rounds[unit_first]
        groups = _unit_groups(by, unit_items, unit_rounds) if by else None
        return cls(
            unit_items,
            unit_rounds,
            unit_of,
            rater_of,
            [names[pk] for pk in annotators[rater_first].tolist()],
            raw,
            groups,
        )

    def sections(self) -> list[tuple[str, str, np.ndarray, int, int]]:
        """(key, label, unit indices, items, judgments) of all judgments and, with a breakdown, of each value."""
        per_unit = np.bincount(self.unit_of, minlength=len(self.units))
        everything = np.arange(len(self.units))
        parts = [("", _("All judged items"), everything)]
        if self.unit_groups is not None:
            members: dict[str, list] = defaultdict(list)
            for unit, value in enumerate(self.unit_groups):
                members[value].append(unit)
            weight = {value: int(per_unit[units].sum()) for value, units in members.items()}
            ordered = sorted(members, key=lambda value: (-weight[value], value))[:MAX_SECTIONS]
            parts += [(value, value, np.array(members[value])) for value in sorted(ordered, key=_natural)]
        return [
            (key, label, units, len(set(self.unit_items[units].tolist())), int(per_unit[units].sum()))
            for key, label, units in parts
        ]

    def summaries(self, units: np.ndarray, criteria: list[Criterion], bootstrap) -> dict:
        return {
            criterion: agreement_summary(
                self.section_table(criterion, units), level=criterion.level, bootstrap=bootstrap
            )
            for criterion in criteria
        }

    def section_table(self, criterion: Criterion, units: np.ndarray) -> RatingTable:
        """One criterion's table over a section's units, among the raters who judged them."""
        return self.table(criterion).take_units(units).without_idle_raters()

    def table(self, criterion: Criterion) -> RatingTable:
        """The raters × units table of one criterion over the whole scope."""
        if criterion not in self._codes:
            raw = self.raw.get(criterion.key, [None] * len(self.unit_of))
            parse = _rating_value if criterion.key.startswith(RATING_PREFIX) else _label_value
            value_of = {text: parse(text) for text in set(raw)}
            categories, source = _scale(criterion, {v for v in value_of.values() if v is not None})
            code_of = {value: code for code, value in enumerate(categories)}
            code_of_raw = {
                text: MISSING if value is None else code_of[value] for text, value in value_of.items()
            }
            value_codes = np.fromiter((code_of_raw[text] for text in raw), dtype=np.int64, count=len(raw))
            judged = value_codes != MISSING
            codes = np.full((len(self.raters), len(self.units)), MISSING, dtype=np.int64)
            # One judgment per annotator, item and round is a database constraint: no cell is written twice.
            codes[self.rater_of[judged], self.unit_of[judged]] = value_codes[judged]
            self._codes[criterion] = RatingTable(
                units=self.units, raters=self.raters, categories=categories, codes=codes, scale_source=source
            )
        return self._codes[criterion]


def _first_appearance(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each row's index among the distinct keys numbered in order of first appearance, and each key's first row."""
    _distinct, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    return rank[inverse.reshape(-1)], first[order]


def _unit_groups(by: str, unit_items: np.ndarray, unit_rounds: np.ndarray) -> list[str]:
    """The breakdown value of each unit; item fields are read once per item."""
    if by == "round":
        return [_breakdown_value(round_, by, round_) for round_ in unit_rounds.tolist()]
    field = _BREAKDOWN_FIELDS.get(by, "item__metadata").removeprefix("item__")
    items = Item.objects.filter(pk__in=set(unit_items.tolist()))
    if field == "metadata":  # read as text and parsed by orjson: the ORM's json.loads of every item is slower
        values = {pk: json_value(text) for pk, text in items.values_list("pk", Cast(field, TextField()))}
    else:
        values = dict(items.values_list("pk", field))
    return [
        _breakdown_value(values[item], by, round_)
        for item, round_ in zip(unit_items.tolist(), unit_rounds.tolist())
    ]


def _scale(criterion: Criterion, seen: set) -> tuple[list, str]:
    """The criterion's categories: its declared scale or choices, and values given outside them (an old label set,
    a changed range), which are kept, not dropped; and where they came from."""
    categories = list(criterion.categories)
    extra = sorted(seen - set(categories), key=str)
    if criterion.key.startswith(RATING_PREFIX):
        source = _("the criterion's scale in the project settings")
        if extra:
            source = _("the criterion's scale in the project settings, widened to values given outside it")
        return sorted(set(categories) | seen), source
    source = _("the project's choices") if not extra else _("the project's choices and older values")
    return categories + extra, source


def criterion_table(rows: list, criterion: Criterion) -> RatingTable:
    """The raters × units table of one criterion of judgment rows (item, round, rater, ratings, vote, class)."""
    unit_index: dict = {}
    rater_index: dict = {}
    cells = {}
    for row in rows:
        unit = unit_index.setdefault((row[0], row[1]), len(unit_index))
        rater = rater_index.setdefault(row[2], len(rater_index))
        cells[(rater, unit)] = _value(row, criterion)
    categories, source = _scale(criterion, {value for value in cells.values() if value is not None})
    code_of = {value: code for code, value in enumerate(categories)}
    codes = np.full((len(rater_index), len(unit_index)), MISSING, dtype=np.int64)
    for (rater, unit), value in cells.items():
        if value is not None:
            codes[rater, unit] = code_of[value]
    return RatingTable(
        units=[f"{item}:{round_}" for item, round_ in unit_index],
        raters=list(rater_index),
        categories=categories,
        codes=codes,
        scale_source=source,
    )


def _rating_value(text):
    """A rating as a number (whole numbers as int); None for a missing or unreadable one."""
    if isinstance(text, bool) or text in (None, ""):
        return None
    try:
        number = float(text)
    except (TypeError, ValueError):
        return None
    return int(number) if number.is_integer() else number


def _label_value(text):
    return text or None


def _value(row: tuple, criterion: Criterion):
    if criterion.key == "vote":
        return _label_value(row[4])
    if criterion.key == "causal_class":
        return _label_value(row[5])
    ratings = row[3] if isinstance(row[3], dict) else {}
    return _rating_value(ratings.get(criterion.key[len(RATING_PREFIX) :]))


def _breakdown_value(raw, by: str, round: int) -> str:
    """The value a judgment is grouped by. For item metadata, what the item recorded for the judgment's round
    (``metadata["rounds"]["2"]["stage"]``: METER's stages are rounds of the same item) wins over its current value."""
    if by.startswith(METADATA_PREFIX):
        key = by[len(METADATA_PREFIX) :]
        metadata = raw if isinstance(raw, dict) else {}
        by_round = (
            metadata.get("rounds", {}).get(str(round), {}) if isinstance(metadata.get("rounds"), dict) else {}
        )
        raw = by_round[key] if isinstance(by_round, dict) and key in by_round else metadata.get(key)
    return "—" if raw in (None, "") else str(raw)


def _natural(text: str):
    return (0, int(text), "") if text.isdigit() else (1, 0, text)


def agreement_key(project, round, by, bootstrap, state: JudgmentsState, *extra) -> str:
    """The cache key of a project's agreement in one scope, as the judgments in it are now."""
    parts = [
        project.pk,
        project.label_set,
        project.criteria,
        round,
        by,
        bootstrap.as_dict() if bootstrap else None,
        state.fingerprint(round),
        get_language(),
        *extra,
    ]
    return "agreement:" + hashlib.sha256(repr(parts).encode()).hexdigest()


def _table_fingerprint(table: RatingTable) -> str:
    """What a summary of the table depends on, whatever the project or scope it came from: its values in unit
    order (the bootstrap draws units by position), its raters' names, its scale and where the scale came from."""
    digest = hashlib.blake2b(digest_size=20)
    digest.update(repr([table.codes.shape, str(table.codes.dtype), table.raters, table.categories]).encode())
    digest.update(repr(table.scale_source).encode())
    digest.update(np.ascontiguousarray(table.codes).tobytes())
    return digest.hexdigest()


def _summary_key(fingerprint: str, criterion: Criterion, bootstrap) -> str:
    """The cache key of one criterion's summary: its table, level, bootstrap and the language of its notes."""
    parts = [fingerprint, criterion.level, bootstrap.as_dict() if bootstrap else None, get_language()]
    return "agreement-summary:" + hashlib.sha256(repr(parts).encode()).hexdigest()
