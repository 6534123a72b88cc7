"""Cohen's kappa (pairwise and its mean, weighted for ordered scales), Fleiss' kappa and Krippendorff's alpha.

Every statistic depends on a unit only through its column of values, so it is computed from the table's
distinct columns (``RatingTable.patterns``) weighted by how many units share each: 100,000 units cost about
what a few thousand do. The formulas are those of maintained libraries, and the tests hold them to the
libraries to 1e-12: scikit-learn's ``cohen_kappa_score`` and the ``krippendorff`` package (neither is imported
here: scikit-learn is a large import for a few formulas, and the package works unit by unit). Fleiss' kappa is written here
because the library versions (statsmodels) assume every unit has the same number of judgments, which review
rounds with skips and late judgments do not give. The bootstrap recomputes each statistic on thousands of
resampled count tables at once; the tests check those bulk formulas against the libraries resample by resample.

A statistic that is undefined for the data (one rater, no unit judged twice, every judgment the
same value…) is returned as ``None`` with a note saying why, never as a bare NaN.
"""

import warnings
from dataclasses import dataclass, field
from itertools import combinations

import numpy as np
from django.utils.translation import gettext as _

from .bootstrap import (
    Bootstrap,
    Interval,
    interval_of,
    percentile_interval,
    replicates,
    too_few_units,
)
from .table import LEVELS, MISSING, AgreementInputError, RatingTable

# Cohen's kappa weights by level of measurement: disagreements on an ordered scale count by distance.
KAPPA_WEIGHTS = {"nominal": None, "ordinal": "linear", "interval": "quadratic", "ratio": "quadratic"}

# Landis & Koch (1977), the usual reading of kappa.
LANDIS_KOCH = [
    (0.0, "poor"),
    (0.20, "slight"),
    (0.40, "fair"),
    (0.60, "moderate"),
    (0.80, "substantial"),
    (1.0, "almost perfect"),
]
# Krippendorff (2004): rely on alpha ≥ .800, draw tentative conclusions from .667, discard below.
KRIPPENDORFF_READING = [(0.667, "unreliable"), (0.800, "tentative"), (float("inf"), "reliable")]


def landis_koch(value: float | None) -> str:
    if value is None:
        return ""
    if value < 0:
        return "poor"
    for upper, reading in LANDIS_KOCH[1:]:
        if value <= upper + 1e-12:
            return reading
    return "almost perfect"


def krippendorff_reading(value: float | None) -> str:
    if value is None:
        return ""
    for upper, reading in KRIPPENDORFF_READING:
        if value < upper:
            return reading
    return "reliable"


@dataclass
class Estimate:
    """One figure: its value (None when undefined, and ``note`` says why), its interval and its units."""

    value: float | None
    n_units: int
    note: str = ""
    interval: Interval | None = None
    scale: str = "kappa"  # "kappa" reads by Landis–Koch, "alpha" by Krippendorff

    @property
    def reading(self) -> str:
        return landis_koch(self.value) if self.scale == "kappa" else krippendorff_reading(self.value)

    def as_dict(self) -> dict:
        return {
            "value": None if self.value is None else round(self.value, 4),
            "ci95": self.interval.as_list() if self.interval else None,
            "reading": self.reading,
            "n_units": self.n_units,
            "note": " ".join(
                part for part in (self.note, self.interval.note if self.interval else "") if part
            ),
        }


@dataclass
class PairKappa:
    rater_a: object
    rater_b: object
    estimate: Estimate

    def as_dict(self) -> dict:
        return {
            "raters": [str(self.rater_a), str(self.rater_b)],
            "kappa": self.estimate.as_dict()["value"],
            **{key: value for key, value in self.estimate.as_dict().items() if key != "value"},
        }


@dataclass
class CohenKappa:
    mean: Estimate
    weights: str | None
    pairs: list[PairKappa] = field(default_factory=list)

    def as_dict(self) -> dict:
        mean = self.mean.as_dict()
        return {
            "mean": mean.pop("value"),
            **mean,
            "weights": self.weights,
            "pairs": [p.as_dict() for p in self.pairs],
        }


# --- Cohen's kappa -------------------------------------------------------------------------------


def kappa_weight_matrix(n_categories: int, weights: str | None) -> np.ndarray:
    """Disagreement weights as scikit-learn defines them: by the distance between category ranks."""
    ranks = np.arange(n_categories)
    distance = np.abs(ranks[:, None] - ranks[None, :]).astype(float)
    if weights is None:
        return (distance > 0).astype(float)
    if weights == "linear":
        return distance
    if weights == "quadratic":
        return distance**2
    raise ValueError(f"unknown kappa weights {weights!r}")


def kappa_from_confusion(confusion: np.ndarray, weight_matrix: np.ndarray) -> np.ndarray:
    """Kappa of each confusion matrix in a (…, K, K) stack; NaN where chance disagreement is zero.

    1 − Σ w·observed / Σ w·expected, expected being the outer product of the margins over the total (as
    scikit-learn computes it); Σ w·expected is written as rows·W·cols / total so no (…, K, K) array is built.
    """
    confusion = np.asarray(confusion, dtype=float)
    k = confusion.shape[-1]
    total = confusion.sum(axis=(-2, -1))
    rows, cols = confusion.sum(axis=-1), confusion.sum(axis=-2)
    observed_d = confusion.reshape(*confusion.shape[:-2], k * k) @ weight_matrix.reshape(-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        expected_d = ((rows @ weight_matrix) * cols).sum(axis=-1) / total
        kappa = 1 - observed_d / expected_d
    return np.where(expected_d > 1e-12, kappa, np.nan)


def cohen_kappa(
    table: RatingTable, *, weights: str | None = None, bootstrap: Bootstrap | None = None
) -> CohenKappa:
    """Kappa for every pair of raters on the units both judged, and the mean of the defined ones (Light's kappa).

    Each pair's confusion matrix is counted over the table's unit patterns, never judgment by judgment.
    The bootstrap resamples the table's units once for every figure: a pair's interval and the mean's come
    from the same resamples (a pair counts, in each, the drawn units both raters judged).
    """
    table = table.pairable()
    k = len(table.categories)
    weight_matrix = kappa_weight_matrix(k, weights)
    patterns = table.patterns
    pairs: list[PairKappa] = []
    pair_cells: list[tuple[np.ndarray, np.ndarray]] = []  # (patterns both judged, confusion cell of each)
    raters = list(combinations(range(table.n_raters), 2))
    confusions = np.zeros((len(raters), k, k))
    for index, (a, b) in enumerate(raters):
        both = np.flatnonzero((patterns.codes[a] != MISSING) & (patterns.codes[b] != MISSING))
        cells = patterns.codes[a, both] * k + patterns.codes[b, both]
        confusions[index] = np.bincount(cells, weights=patterns.sizes[both], minlength=k * k).reshape(k, k)
        pair_cells.append((both, cells))
    kappas = kappa_from_confusion(confusions, weight_matrix)  # every pair at once
    for (a, b), confusion, kappa in zip(raters, confusions, kappas):
        pairs.append(PairKappa(table.raters[a], table.raters[b], _pair_kappa(confusion, kappa, table)))

    defined = [pair.estimate.value for pair in pairs if pair.estimate.value is not None]
    if table.n_raters < 2:
        mean = Estimate(None, 0, _single_rater_note(table))
    elif not pairs or all(pair.estimate.n_units == 0 for pair in pairs):
        mean = Estimate(None, 0, _("No two raters judged the same unit."))
    elif not defined:
        mean = Estimate(None, table.n_units, _("No pair of raters has a defined kappa (see the pairs)."))
    else:
        note = ""
        if len(defined) < len(pairs):
            note = _("Mean of the %(defined)d of %(pairs)d pairs whose kappa is defined.") % {
                "defined": len(defined),
                "pairs": len(pairs),
            }
        mean = Estimate(float(np.mean(defined)), table.n_units, note)

    if bootstrap is not None and defined:
        per_pair = _resampled_pairs(table, raters, pair_cells, k, weight_matrix, bootstrap)
        for index, pair in enumerate(pairs):
            if pair.estimate.value is not None:
                enough = pair.estimate.n_units >= 2
                pair.estimate.interval = (
                    interval_of(per_pair[:, index], bootstrap) if enough else too_few_units()
                )
        if mean.value is not None and table.n_units < 2:
            mean.interval = too_few_units()
        elif mean.value is not None:
            with warnings.catch_warnings():
                warnings.simplefilter(
                    "ignore", RuntimeWarning
                )  # a resample where no pair is defined gives NaN
                mean.interval = interval_of(np.nanmean(per_pair, axis=1), bootstrap)
    return CohenKappa(mean=mean, weights=weights, pairs=pairs)


def _pair_kappa(confusion: np.ndarray, kappa: float, table: RatingTable) -> Estimate:
    n = round(confusion.sum())
    if n == 0:
        return Estimate(None, 0, _("These two raters judged no unit in common."))
    used = np.flatnonzero(confusion.sum(axis=0) + confusion.sum(axis=1))
    if len(used) == 1:
        return Estimate(None, n, _one_value_note(table.categories[used[0]], n))
    return Estimate(float(kappa), n)


def _resampled_pairs(
    table: RatingTable,
    raters: list,
    pair_cells: list,
    k: int,
    weight_matrix: np.ndarray,
    bootstrap: Bootstrap,
) -> np.ndarray:
    """(resamples × pairs): each pair's kappa in each resample. The pairs of raters who judged every unit (all of
    them in ExpliCa's design) come from dense products; the others from sparse confusion matrices. So one late
    rater's judgment adds only that rater's pairs to the sparse path, instead of sending every pair there."""
    patterns = table.patterns
    n_patterns = len(patterns.sizes)
    complete = (patterns.codes != MISSING).all(axis=1)
    dense = [index for index, (a, b) in enumerate(raters) if complete[a] and complete[b]]
    if n_patterns * (len(dense) + int(complete.sum()) * k) > _DENSE_CELLS:
        dense = []
    in_dense = set(dense)
    sparse = [index for index in range(len(raters)) if index not in in_dense]
    per_pair = np.empty((bootstrap.resamples, len(raters)))
    if (
        dense
    ):  # the complete raters' pairs, in the order of combinations() as _complete_pair_replicates gives them
        codes = patterns.codes[complete]
        per_pair[:, dense] = replicates(
            lambda w: _complete_pair_replicates(w, codes, k, weight_matrix), table.resampled(bootstrap)
        )
    if sparse:
        cells_of = _cells_of([pair_cells[index] for index in sparse], k, n_patterns, table.n_units)
        per_pair[:, sparse] = replicates(
            lambda w: _pair_replicates(w, cells_of, len(sparse), k, weight_matrix), table.resampled(bootstrap)
        )
    return per_pair


# Keep a block's resampled confusion matrices near 32 MB however many pairs and categories there are.
_CONFUSION_CELLS = 4_000_000
# Up to this many (resample, pattern of a pair) terms per block the sums are numpy's; beyond, scipy's sparse
# product, which is faster per term but costs an import of its own, worth it only for the largest tables
# (``benchmarks/agreement.py`` measures them).
_NUMPY_TERMS = 20_000_000


def _pair_replicates(
    weights: np.ndarray, cells_of: "_CellsOf", n_pairs: int, k: int, weight_matrix: np.ndarray
) -> np.ndarray:
    """(resamples × pairs): each pair's kappa in each resample. A resampled confusion matrix is the sum of the
    draw counts of the patterns in each of its cells, for all pairs at once."""
    out = []
    chunk = max(1, _CONFUSION_CELLS // max(n_pairs * k * k, 1))
    for start in range(0, len(weights), chunk):
        block = weights[start : start + chunk]
        confusion = cells_of.sums(block).reshape(len(block), n_pairs, k, k)
        out.append(kappa_from_confusion(confusion, weight_matrix))
    return np.concatenate(out)


@dataclass
class _CellsOf:
    """Which patterns fall in each cell of every pair's confusion matrix: ``patterns`` ordered by cell, each used
    cell's entries starting at ``starts``."""

    patterns: np.ndarray
    cells: np.ndarray
    starts: np.ndarray
    used: np.ndarray
    n_cells: int
    n_patterns: int
    # Draw counts are whole numbers below 2**24, which float32 holds exactly, and so are their sums.
    dtype: type
    _matrix: object = None

    def sums(self, block: np.ndarray) -> np.ndarray:
        """(resamples × cells): the draw counts of each cell's patterns summed, exactly, in every resample."""
        if len(self.patterns) * len(block) <= _NUMPY_TERMS:
            out = np.zeros((len(block), self.n_cells))
            if len(self.used):
                out[:, self.used] = np.add.reduceat(
                    block[:, self.patterns].astype(self.dtype), self.starts, axis=1
                )
            return out
        if self._matrix is None:
            from scipy import sparse

            self._matrix = sparse.csr_matrix(
                (np.ones(len(self.patterns), dtype=self.dtype), (self.cells, self.patterns)),
                shape=(self.n_cells, self.n_patterns),
            )
        return np.asarray((self._matrix @ block.astype(self.dtype).T).T, dtype=float)


# Above this many cells the dense tables of a complete design would outweigh the sparse confusion matrices.
_DENSE_CELLS = 20_000_000


def _complete_pair_replicates(
    weights: np.ndarray, codes: np.ndarray, k: int, weight_matrix: np.ndarray
) -> np.ndarray:
    """(resamples × pairs) when every rater judged every unit (ExpliCa's 15 raters): kappa needs of each pair only
    its weighted disagreement, its total and its two margins, and with no unit missing a rater's margin is the
    same in all its pairs. So two dense products replace the sparse confusion matrices: draws × each rater's
    values (margins) and draws × each pair's disagreement. The tests hold it to the general path to 1e-12."""
    n_raters, n_patterns = codes.shape
    first, second = np.triu_indices(n_raters, k=1)
    # Every term of both products is a whole number (draw counts × 0/1 or × the weight of a distance), and so is
    # every partial sum; below 2**24 float32 holds them exactly, so the products are the same numbers at half the
    # cost.
    exact = np.array_equal(weight_matrix, np.round(weight_matrix)) and (
        float(weights.sum(axis=1).max(initial=0)) * max(float(weight_matrix.max(initial=0)), 1.0) < 2**24
    )
    dtype = np.float32 if exact else float
    values = np.zeros((n_patterns, n_raters * k), dtype=dtype)
    values[np.arange(n_patterns)[:, None], np.arange(n_raters) * k + codes.T] = 1
    disagreement = weight_matrix[codes[first], codes[second]].T.astype(dtype)  # (patterns × pairs)
    total = weights.sum(axis=1).astype(float)
    weights = weights.astype(dtype)
    margins = (weights @ values).astype(float).reshape(len(weights), n_raters, k)
    observed_d = (weights @ disagreement).astype(float)
    with np.errstate(divide="ignore", invalid="ignore"):
        expected_d = ((margins @ weight_matrix)[:, first] * margins[:, second]).sum(axis=-1) / total[:, None]
        kappa = 1 - observed_d / expected_d
    return np.where(expected_d > 1e-12, kappa, np.nan)


def _cells_of(pair_cells, k: int, n_patterns: int, n_units: int) -> _CellsOf:
    """Where every pattern's draw counts go in every pair's confusion matrix (pair index × k² + cell)."""
    rows = (
        np.concatenate([both for both, _cells in pair_cells]) if pair_cells else np.zeros(0, dtype=np.int64)
    )
    columns = (
        np.concatenate([index * k * k + cells for index, (_both, cells) in enumerate(pair_cells)])
        if pair_cells
        else np.zeros(0, dtype=np.int64)
    )
    order = np.argsort(columns, kind="stable")
    rows, columns = rows[order], columns[order]
    starts = np.flatnonzero(np.r_[True, columns[1:] != columns[:-1]]) if len(columns) else columns
    return _CellsOf(
        patterns=rows,
        cells=columns,
        starts=starts,
        used=columns[starts],
        n_cells=len(pair_cells) * k * k,
        n_patterns=n_patterns,
        dtype=np.float32 if n_units < 2**24 else np.float64,
    )


# --- Fleiss' kappa -------------------------------------------------------------------------------


def fleiss_from_counts(counts: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Fleiss' kappa of a (units × categories) count table under each row of unit ``weights``.

    Units may have different numbers of judgments n_i (each at least 2): the agreement of a
    unit is P_i = (Σ_j n_ij² − n_i) / (n_i (n_i − 1)), P̄ is their mean, and chance agreement is
    Σ_j p_j² with p_j the share of all judgments in category j. With equal n_i this is Fleiss (1971).
    """
    counts = counts.astype(float)
    n_i = counts.sum(axis=1)
    p_unit = ((counts**2).sum(axis=1) - n_i) / (n_i * (n_i - 1))
    weights = np.atleast_2d(weights).astype(float)
    with np.errstate(divide="ignore", invalid="ignore"):
        p_bar = weights @ p_unit / weights.sum(axis=1)
        p_category = (weights @ counts) / (weights @ n_i)[:, None]
        p_chance = (p_category**2).sum(axis=1)
        kappa = (p_bar - p_chance) / (1 - p_chance)
    return np.where(1 - p_chance > 1e-12, kappa, np.nan)


def fleiss_kappa(table: RatingTable, *, bootstrap: Bootstrap | None = None) -> Estimate:
    """Fleiss' kappa on the units with at least two judgments (``n_units`` says how many)."""
    if table.n_raters < 2:
        return Estimate(None, 0, _single_rater_note(table))
    table = table.pairable()
    if table.n_units == 0:
        return Estimate(None, 0, _("No unit has two judgments."))
    patterns = table.patterns
    counts = patterns.value_counts
    used = np.flatnonzero(counts.sum(axis=0))
    if len(used) == 1:
        return Estimate(None, table.n_units, _one_value_note(table.categories[used[0]], table.n_units))
    value = float(fleiss_from_counts(counts, patterns.sizes)[0])
    estimate = Estimate(value, table.n_units)
    if bootstrap is not None:
        estimate.interval = percentile_interval(
            lambda w: fleiss_from_counts(counts, w), table.n_units, bootstrap, table.resampled(bootstrap)
        )
    return estimate


# --- Krippendorff's alpha ------------------------------------------------------------------------


def krippendorff_alpha(
    table: RatingTable, *, level: str = "nominal", bootstrap: Bootstrap | None = None
) -> Estimate:
    """Krippendorff's alpha at the given level of measurement, from the coincidences of the unit patterns
    (the tests hold it to the ``krippendorff`` package to 1e-12)."""
    if level not in LEVELS:
        raise AgreementInputError(f"level must be one of {', '.join(LEVELS)}, not {level!r}")
    if table.n_raters < 2:
        return Estimate(None, 0, _single_rater_note(table), scale="alpha")
    table = table.pairable()
    if table.n_units == 0:
        return Estimate(None, 0, _("No unit has two judgments."), scale="alpha")
    patterns = table.patterns
    counts = patterns.value_counts
    used = np.flatnonzero(counts.sum(axis=0))
    if len(used) == 1:
        return Estimate(
            None, table.n_units, _one_value_note(table.categories[used[0]], table.n_units), scale="alpha"
        )
    domain = _alpha_domain(table, level)
    contributions = _unit_coincidences(counts)
    value = float(alpha_replicates(contributions, patterns.sizes, domain, level)[0])
    estimate = Estimate(value, table.n_units, scale="alpha")
    if bootstrap is not None:
        estimate.interval = percentile_interval(
            lambda w: alpha_replicates(contributions, w, domain, level),
            table.n_units,
            bootstrap,
            table.resampled(bootstrap),
        )
    return estimate


def _alpha_domain(table: RatingTable, level: str) -> np.ndarray:
    if level in ("interval", "ratio"):
        return table.numeric_categories()
    return np.arange(len(table.categories))  # nominal and ordinal distances only use the order


def _unit_coincidences(counts: np.ndarray) -> np.ndarray:
    """Each unit's share of the coincidence matrix, flattened: (units × V²)."""
    counts = counts.astype(float)
    pairable = np.maximum(counts.sum(axis=1), 2)
    outer = counts[:, :, None] * counts[:, None, :]
    outer -= counts[:, :, None] * np.eye(counts.shape[1])[None]
    return (outer / (pairable - 1)[:, None, None]).reshape(len(counts), -1)


def alpha_replicates(
    contributions: np.ndarray, weights: np.ndarray, domain: np.ndarray, level: str
) -> np.ndarray:
    """Alpha for each row of unit ``weights``: 1 − Σ o·δ / Σ e·δ, as the krippendorff package computes it."""
    v = len(domain)
    observed = (np.atleast_2d(weights).astype(float) @ contributions).reshape(-1, v, v)
    n_v = observed.sum(axis=1)
    n = n_v.sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        expected = (n_v[:, :, None] * n_v[:, None, :] - n_v[:, :, None] * np.eye(v)[None]) / (n - 1)[
            :, None, None
        ]
        delta = _distances(domain, level, n_v)
        alpha = 1 - (observed * delta).sum(axis=(1, 2)) / (expected * delta).sum(axis=(1, 2))
        defined = (expected * delta).sum(axis=(1, 2)) > 1e-12
    return np.where(defined, alpha, np.nan)


def _distances(domain: np.ndarray, level: str, n_v: np.ndarray) -> np.ndarray:
    """δ² between every two values; for the ordinal level it depends on how often each value was used."""
    a, b = domain[:, None].astype(float), domain[None, :].astype(float)
    if level == "nominal":
        return (a != b).astype(float)[None]
    if level == "interval":
        return ((a - b) ** 2)[None]
    if level == "ratio":
        total = a + b
        return np.divide(a - b, total, out=np.zeros_like(total), where=total != 0)[None] ** 2
    # ordinal: (Σ_{g=c..k} n_g − (n_c + n_k)/2)²
    cumulative = np.concatenate([np.zeros((n_v.shape[0], 1)), np.cumsum(n_v, axis=1)], axis=1)
    idx = np.arange(len(domain))
    low, high = np.minimum(idx[:, None], idx[None, :]), np.maximum(idx[:, None], idx[None, :])
    between = cumulative[:, high + 1] - cumulative[:, low]
    return (between - (n_v[:, :, None] + n_v[:, None, :]) / 2) ** 2


# --- notes ---------------------------------------------------------------------------------------


def _single_rater_note(table: RatingTable) -> str:
    if table.n_raters == 0:
        return _("There are no judgments.")
    return _("Agreement needs at least two raters; these data have one.")


def _one_value_note(value, n_units: int) -> str:
    return _(
        "Every judgment on the %(n)d units is “%(value)s”: observed agreement is total, but so is the "
        "agreement expected by chance, so the statistic is undefined (0/0)."
    ) % {"n": n_units, "value": value}
