"""Seeded percentile bootstrap over units (items): resample units with replacement, recompute, take percentiles.

A resample is a vector of unit weights (how many times each unit was drawn), so every statistic
here is written to take a block of weight vectors and return one value per vector, with NaN
where the statistic is undefined for that resample.
"""

from collections.abc import Callable, Iterator
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

    def weight_blocks(self, n_units: int) -> Iterator[np.ndarray]:
        """Blocks of (resamples × units) draw counts; the same seed gives the same draws."""
        rng = np.random.default_rng(self.seed)
        block = max(1, min(self.resamples, _BLOCK_CELLS // max(n_units, 1)))
        done = 0
        while done < self.resamples:
            size = min(block, self.resamples - done)
            draws = rng.integers(0, n_units, size=(size, n_units))
            offsets = (np.arange(size) * n_units)[:, None]
            yield np.bincount((draws + offsets).ravel(), minlength=size * n_units).reshape(size, n_units)
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
    statistic: Callable[[np.ndarray], np.ndarray], n_units: int, bootstrap: Bootstrap
) -> Interval:
    """The percentile interval of ``statistic`` over ``bootstrap.resamples`` resamples of ``n_units`` units."""
    if n_units < 2:
        return Interval(None, None, 0, _("too few units to resample"))
    values = np.concatenate([statistic(weights) for weights in bootstrap.weight_blocks(n_units)])
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
