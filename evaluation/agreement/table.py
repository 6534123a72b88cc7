"""Judgments as a raters × units table of category codes, built from long rows (unit, rater, value)."""

import math
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

LEVELS = ("nominal", "ordinal", "interval", "ratio")
MISSING = -1


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
    _counts: np.ndarray | None = field(default=None, repr=False, compare=False)

    @classmethod
    def from_rows(
        cls,
        rows: Iterable[tuple[Hashable, Hashable, object]],
        categories: Sequence | None = None,
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
        return cls(units=list(unit_index), raters=list(rater_index), categories=categories, codes=codes)

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
            counts = np.zeros((self.n_units, len(self.categories)), dtype=np.int64)
            raters, units = np.nonzero(self.codes != MISSING)
            np.add.at(counts, (units, self.codes[raters, units]), 1)
            object.__setattr__(self, "_counts", counts)
        return self._counts

    @property
    def judgments_per_unit(self) -> np.ndarray:
        return self.value_counts.sum(axis=1)

    def pairable(self) -> "RatingTable":
        """The units with at least two judgments: the only ones any agreement statistic can use."""
        keep = self.judgments_per_unit >= 2
        return self.take_units(np.flatnonzero(keep))

    def take_units(self, indices: np.ndarray) -> "RatingTable":
        return RatingTable(
            units=[self.units[i] for i in indices],
            raters=self.raters,
            categories=self.categories,
            codes=self.codes[:, indices],
        )

    def numeric_categories(self) -> np.ndarray:
        """The categories as numbers, for interval and ratio distances."""
        try:
            return np.array([float(value) for value in self.categories], dtype=float)
        except (TypeError, ValueError) as exc:
            raise AgreementInputError(
                "interval and ratio levels need numeric values; got " + ", ".join(map(repr, self.categories[:5]))
            ) from exc


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
