"""Seeded percentile bootstrap over units (items): resample units with replacement, recompute, take percentiles.

A resample is a vector of unit weights (how many times each unit was drawn), so every statistic
here is written to take a block of weight vectors and return one value per vector, with NaN
where the statistic is undefined for that resample.
"""

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

import numpy as np
from django.utils.translation import gettext as _

# Keep a block of weight vectors near 16 MB whatever the number of units.
_BLOCK_CELLS = 2_000_000
# Below this share of defined resamples an interval would describe a different population.
_MIN_DEFINED_SHARE = 0.5


@dataclass(frozen=True)
class Bootstrap:
    resamples: int = 1000
    seed: int = 0
    confidence: float = 0.95

    def weight_blocks(self, n_units: int, groups: np.ndarray | None = None) -> Iterator[np.ndarray]:
        """Blocks of (resamples × units) draw counts; the same seed gives the same draws.

        With ``groups`` (the group of each unit, such as its pattern of values) the counts are summed per
        group, (resamples × groups): the same draws, told apart only as far as the statistic can tell them.
        """
        rng = np.random.default_rng(self.seed)
        block = max(1, min(self.resamples, _BLOCK_CELLS // max(n_units, 1)))
        width = n_units if groups is None else (int(groups.max()) + 1 if len(groups) else 0)
        done = 0
        while done < self.resamples:
            size = min(block, self.resamples - done)
            draws = rng.integers(0, n_units, size=(size, n_units))
            if groups is not None:
                # In place: a second block of draws would cost 16 MB. Every index is valid, so "clip" changes
                # nothing; it only lets numpy write straight into ``draws`` ("raise" copies through a buffer).
                np.take(groups, draws, out=draws, mode="clip")
            draws += (np.arange(size) * width)[:, None]
            yield np.bincount(draws.ravel(), minlength=size * width).reshape(size, width)
            done += size

    def as_dict(self) -> dict:
        return {"resamples": self.resamples, "seed": self.seed, "confidence": self.confidence}


@dataclass(frozen=True)
class Interval:
    low: float | None
    high: float | None
    resamples_used: int
    note: str = ""

    @property
    def defined(self) -> bool:
        return self.low is not None

    def as_list(self) -> list[float] | None:
        return [round(self.low, 4), round(self.high, 4)] if self.defined else None


def percentile_interval(
    statistic: Callable[[np.ndarray], np.ndarray],
    n_units: int,
    bootstrap: Bootstrap,
    blocks: Iterable[np.ndarray] | None = None,
) -> Interval:
    """The percentile interval of ``statistic`` over ``bootstrap.resamples`` resamples of ``n_units`` units.
    ``blocks`` gives the draw counts already summed per group of units (``RatingTable.resampled``)."""
    if n_units < 2:
        return too_few_units()
    return interval_of(
        replicates(statistic, blocks if blocks is not None else bootstrap.weight_blocks(n_units)), bootstrap
    )


def replicates(statistic: Callable[[np.ndarray], np.ndarray], blocks: Iterable[np.ndarray]) -> np.ndarray:
    """The statistic on every resample, stacked along the first axis (it may give several values per resample)."""
    return np.concatenate([statistic(weights) for weights in blocks])


def too_few_units() -> Interval:
    return Interval(None, None, 0, _("too few units to resample"))


def interval_of(values: np.ndarray, bootstrap: Bootstrap) -> Interval:
    """The percentile interval of one statistic's replicates; NaN marks a resample where it is undefined."""
    defined = values[np.isfinite(values)]
    if len(defined) < _MIN_DEFINED_SHARE * bootstrap.resamples:
        return Interval(
            None,
            None,
            len(defined),
            _("undefined in %(missing)d of %(total)d resamples, so no interval is given")
            % {"missing": bootstrap.resamples - len(defined), "total": bootstrap.resamples},
        )
    tail = (1 - bootstrap.confidence) / 2
    low, high = np.quantile(defined, [tail, 1 - tail])
    return Interval(float(low), float(high), len(defined))
