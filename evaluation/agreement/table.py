"""Judgments as a raters × units table of category codes, built from long rows (unit, rater, value)."""

import math
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

LEVELS = ("nominal", "ordinal", "interval", "ratio")
MISSING = -1
# Resampled pattern counts are kept for the table's next statistic up to this many cells (64 MB).
_KEPT_DRAW_CELLS = 16_000_000
# A range wider than this is not a rating scale (years, counts): the values seen are the scale then.
_MAX_RANGE = 1000


class AgreementInputError(ValueError):
    """The judgments cannot be read as a reliability table; the message says what and where."""


@dataclass(frozen=True)
class RatingTable:
    """``codes[r, u]`` is the index in ``categories`` of rater r's value for unit u, or -1 (no judgment).

    ``categories`` is the ordered domain of values: for ordinal, interval and ratio levels its
    order is the scale's order, and it may hold categories nobody used (they matter to the
    ordinal distance and to weighted kappa).
    """

    units: list
    raters: list
    categories: list
    codes: np.ndarray
    # Where ``categories`` came from (the project's criterion, --categories, the range of the values…).
    scale_source: str = field(default="", compare=False)
    _counts: np.ndarray | None = field(default=None, repr=False, compare=False)
    _patterns: "UnitPatterns | None" = field(default=None, repr=False, compare=False)
    _pairable: "RatingTable | None" = field(default=None, repr=False, compare=False)
    _resampled: dict = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_rows(
        cls,
        rows: Iterable[tuple[Hashable, Hashable, object]],
        categories: Sequence | None = None,
        scale_source: str = "",
    ) -> "RatingTable":
        """One row per judgment. A value of None or "" is a missing judgment (the rater skipped the unit).

        Without ``categories`` the domain is the sorted set of values seen. Raises
        ``AgreementInputError`` for a rater judging a unit twice or a value outside ``categories``.
        """
        unit_index: dict = {}
        rater_index: dict = {}
        cells: dict[tuple[int, int], object] = {}
        for unit, rater, value in rows:
            u = unit_index.setdefault(unit, len(unit_index))
            r = rater_index.setdefault(rater, len(rater_index))
            if _is_missing(value):
                continue
            if (r, u) in cells:
                raise AgreementInputError(f"rater {rater!r} judged unit {unit!r} more than once")
            cells[(r, u)] = value
        if categories is None:
            categories = sorted(set(cells.values()), key=_sort_key)
        categories = list(categories)
        code_of = {value: code for code, value in enumerate(categories)}
        codes = np.full((len(rater_index), len(unit_index)), MISSING, dtype=np.int64)
        for (r, u), value in cells.items():
            if value not in code_of:
                raise AgreementInputError(
                    f"value {value!r} is not one of the categories ({', '.join(map(str, categories))})"
                )
            codes[r, u] = code_of[value]
        return cls(
            units=list(unit_index),
            raters=list(rater_index),
            categories=categories,
            codes=codes,
            scale_source=scale_source,
        )

    @property
    def n_units(self) -> int:
        return len(self.units)

    @property
    def n_raters(self) -> int:
        return len(self.raters)

    @property
    def n_judgments(self) -> int:
        return int((self.codes != MISSING).sum())

    @property
    def value_counts(self) -> np.ndarray:
        """(units × categories): how many raters gave each value to each unit."""
        if self._counts is None:
            k = len(self.categories)
            present = self.codes != MISSING
            flat = (np.arange(self.n_units)[None, :] * k + self.codes)[present]
            counts = np.bincount(flat, minlength=self.n_units * k).reshape(self.n_units, k)
            object.__setattr__(self, "_counts", counts)
        return self._counts

    @property
    def patterns(self) -> "UnitPatterns":
        """The distinct columns of ``codes``: every statistic here depends on a unit only through its column."""
        if self._patterns is None:
            object.__setattr__(self, "_patterns", UnitPatterns.of(self.codes, len(self.categories)))
        return self._patterns

    @property
    def judgments_per_unit(self) -> np.ndarray:
        return self.value_counts.sum(axis=1)

    def pairable(self) -> "RatingTable":
        """The units with at least two judgments: the only ones any agreement statistic can use."""
        if self._pairable is None:
            keep = self.judgments_per_unit >= 2
            object.__setattr__(
                self, "_pairable", self if keep.all() else self.take_units(np.flatnonzero(keep))
            )
        return self._pairable

    def resampled(self, bootstrap) -> Iterable[np.ndarray]:
        """The bootstrap's draw counts summed per unit pattern, in blocks of resamples. Every statistic of the
        table resamples with the same seed, so the draws are made once and kept while they are small."""
        if bootstrap in self._resampled:
            return self._resampled[bootstrap]
        blocks = bootstrap.weight_blocks(self.n_units, self.patterns.of_unit)
        if bootstrap.resamples * len(self.patterns.sizes) > _KEPT_DRAW_CELLS:
            return blocks
        kept = [block.astype(np.int32) for block in blocks]
        self._resampled[bootstrap] = kept
        return kept

    def take_units(self, indices: np.ndarray) -> "RatingTable":
        return RatingTable(
            units=[self.units[i] for i in indices],
            raters=self.raters,
            categories=self.categories,
            codes=self.codes[:, indices],
            scale_source=self.scale_source,
        )

    def without_idle_raters(self) -> "RatingTable":
        """The raters who judged at least one of these units (a breakdown's section leaves some idle)."""
        active = (self.codes != MISSING).any(axis=1)
        if active.all():
            return self
        return RatingTable(
            units=self.units,
            raters=[r for r, keep in zip(self.raters, active) if keep],
            categories=self.categories,
            codes=self.codes[active],
            scale_source=self.scale_source,
        )

    def numeric_categories(self) -> np.ndarray:
        """The categories as numbers, for interval and ratio distances."""
        try:
            return np.array([float(value) for value in self.categories], dtype=float)
        except (TypeError, ValueError) as exc:
            raise AgreementInputError(
                "interval and ratio levels need numeric values; got "
                + ", ".join(map(repr, self.categories[:5]))
            ) from exc


@dataclass(frozen=True)
class UnitPatterns:
    """Units that got the same value from every rater, counted once: units rated on a five-point scale by five
    raters have at most 5⁵ patterns however many units there are, so the statistics and their bootstrap work
    on the patterns, not on the units.

    ``codes[:, p]`` is pattern p, ``sizes[p]`` how many units have it, ``of_unit[u]`` the pattern of unit u.
    """

    codes: np.ndarray
    sizes: np.ndarray
    of_unit: np.ndarray
    n_categories: int

    @classmethod
    def of(cls, codes: np.ndarray, n_categories: int) -> "UnitPatterns":
        n_raters, n_units = codes.shape
        if n_units == 0:
            empty = np.zeros(0, dtype=np.int64)
            return cls(codes=codes, sizes=empty, of_unit=empty, n_categories=n_categories)
        if n_raters * math.log2(n_categories + 1) < 62:  # one integer per column, so sorting is cheap
            places = (n_categories + 1) ** np.arange(n_raters, dtype=np.int64)
            keys = ((codes + 1) * places[:, None]).sum(axis=0)
            _keys, first, of_unit, sizes = np.unique(
                keys, return_index=True, return_inverse=True, return_counts=True
            )
        else:
            _columns, first, of_unit, sizes = np.unique(
                codes.T, axis=0, return_index=True, return_inverse=True, return_counts=True
            )
        return cls(codes=codes[:, first], sizes=sizes, of_unit=of_unit.reshape(-1), n_categories=n_categories)

    @property
    def value_counts(self) -> np.ndarray:
        """(patterns × categories): how many raters gave each value in each pattern."""
        n_patterns = self.codes.shape[1]
        present = self.codes != MISSING
        flat = (np.arange(n_patterns)[None, :] * self.n_categories + self.codes)[present]
        return np.bincount(flat, minlength=n_patterns * self.n_categories).reshape(
            n_patterns, self.n_categories
        )


def whole_number_range(values: list) -> list[int] | None:
    """Every whole number from the lowest value to the highest, when all values are whole numbers: a value of
    the scale that nobody used still weighs in Cohen's weighted kappa. None for other values."""
    if (
        not values
        or not all(isinstance(value, int) for value in values)
        or max(values) - min(values) > _MAX_RANGE
    ):
        return None
    return list(range(min(values), max(values) + 1))


def _is_missing(value) -> bool:
    if value is None:
        return True
    if isinstance(value, str):
        return value.strip() == ""
    return isinstance(value, float) and math.isnan(value)


def _sort_key(value):
    """Numbers first in numeric order, then everything else by its text."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return (0, float(value), "")
    return (1, 0.0, str(value))
