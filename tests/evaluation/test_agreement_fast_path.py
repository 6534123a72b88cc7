"""The statistics from unit patterns, and the CSV read column-wise, give what the unit-by-unit way gives (1e-12)."""

import warnings
from itertools import combinations

import krippendorff
import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from evaluation.agreement import (
    LEVELS,
    Bootstrap,
    RatingTable,
    cohen_kappa,
    fleiss_kappa,
    krippendorff_alpha,
)
from evaluation.agreement.bootstrap import percentile_interval
from evaluation.agreement.longcsv import read_long_csv
from evaluation.agreement.statistics import (
    KAPPA_WEIGHTS,
    _unit_coincidences,
    alpha_replicates,
    fleiss_from_counts,
    kappa_from_confusion,
    kappa_weight_matrix,
)
from evaluation.agreement.table import MISSING

EXACT = 1e-12


def random_table(seed: int, n_units: int = 300, n_raters: int = 5, scale=(1, 2, 3, 4, 5)) -> RatingTable:
    """Ratings near a true value, a tenth of them skipped, so units repeat patterns and some are judged once."""
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, len(scale), n_units)
    rows = []
    for rater in range(n_raters):
        for unit in range(n_units):
            if rng.random() < 0.1:
                continue
            value = scale[int(np.clip(truth[unit] + rng.choice([-1, 0, 0, 1]), 0, len(scale) - 1))]
            rows.append((f"u{unit}", f"r{rater}", value))
    return RatingTable.from_rows(rows, categories=list(scale))


def reliability_data(table: RatingTable) -> np.ndarray:
    values = np.array(table.categories, dtype=float)[np.where(table.codes == MISSING, 0, table.codes)]
    return np.where(table.codes == MISSING, np.nan, values)


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("level", LEVELS)
def test_alpha_from_patterns_equals_the_krippendorff_package_on_every_judgment(seed, level):
    table = random_table(seed)
    expected = krippendorff.alpha(
        reliability_data=reliability_data(table), value_domain=[1, 2, 3, 4, 5], level_of_measurement=level
    )
    assert abs(krippendorff_alpha(table, level=level).value - expected) < EXACT


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_fleiss_from_patterns_equals_the_unit_by_unit_formula(seed):
    table = random_table(seed)
    counts = table.pairable().value_counts
    n_i = counts.sum(axis=1)
    p_unit = ((counts**2).sum(axis=1) - n_i) / (n_i * (n_i - 1))
    p_category = counts.sum(axis=0) / counts.sum()
    chance = (p_category**2).sum()
    assert abs(fleiss_kappa(table).value - (p_unit.mean() - chance) / (1 - chance)) < EXACT


@pytest.mark.parametrize("seed", [1, 2])
@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
def test_each_pairs_kappa_from_patterns_equals_scikit_learn_on_the_units_both_judged(seed, weights):
    table = random_table(seed)
    result = cohen_kappa(table, weights=weights)
    for pair, (a, b) in zip(result.pairs, combinations(range(table.n_raters), 2)):
        both = (table.codes[a] != MISSING) & (table.codes[b] != MISSING)
        expected = cohen_kappa_score(
            table.codes[a, both], table.codes[b, both], labels=list(range(5)), weights=weights
        )
        assert pair.estimate.n_units == both.sum()
        assert abs(pair.estimate.value - expected) < EXACT


def unit_by_unit_mean_kappa_replicates(table: RatingTable, weights_name, bootstrap: Bootstrap) -> np.ndarray:
    """The replicates of the mean kappa as they were computed before patterns: each pair's shared units one-hot."""
    table = table.pairable()
    k = len(table.categories)
    weight_matrix = kappa_weight_matrix(k, weights_name)
    per_block = []
    for weights in bootstrap.weight_blocks(table.n_units):
        per_pair = []
        for a, b in combinations(range(table.n_raters), 2):
            shared = np.flatnonzero((table.codes[a] != MISSING) & (table.codes[b] != MISSING))
            one_hot = np.zeros((len(shared), k * k))
            one_hot[np.arange(len(shared)), table.codes[a, shared] * k + table.codes[b, shared]] = 1
            confusion = (weights[:, shared].astype(float) @ one_hot).reshape(-1, k, k)
            per_pair.append(kappa_from_confusion(confusion, weight_matrix))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            per_block.append(np.nanmean(np.vstack(per_pair), axis=0))
    return np.concatenate(per_block)


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval"])
def test_bootstrap_intervals_from_patterns_equal_those_resampled_unit_by_unit(level):
    """The same draws (same seed) summed per pattern give the same resampled statistics, so the same intervals."""
    table = random_table(4, n_units=200)
    bootstrap = Bootstrap(resamples=300, seed=11)
    counts = table.pairable().value_counts
    n = table.pairable().n_units

    fleiss_before = percentile_interval(lambda w: fleiss_from_counts(counts, w), n, bootstrap)
    fleiss_now = fleiss_kappa(table, bootstrap=bootstrap).interval
    assert (
        abs(fleiss_now.low - fleiss_before.low) < EXACT and abs(fleiss_now.high - fleiss_before.high) < EXACT
    )

    domain = (
        np.array(table.categories, dtype=float) if level == "interval" else np.arange(len(table.categories))
    )
    contributions = _unit_coincidences(counts)
    alpha_before = percentile_interval(
        lambda w: alpha_replicates(contributions, w, domain, level), n, bootstrap
    )
    alpha_now = krippendorff_alpha(table, level=level, bootstrap=bootstrap).interval
    assert abs(alpha_now.low - alpha_before.low) < EXACT and abs(alpha_now.high - alpha_before.high) < EXACT

    before = unit_by_unit_mean_kappa_replicates(table, KAPPA_WEIGHTS[level], bootstrap)
    tail = (1 - bootstrap.confidence) / 2
    low, high = np.quantile(before[np.isfinite(before)], [tail, 1 - tail])
    mean_now = cohen_kappa(table, weights=KAPPA_WEIGHTS[level], bootstrap=bootstrap).mean.interval
    assert abs(mean_now.low - low) < EXACT and abs(mean_now.high - high) < EXACT


def test_the_csv_read_by_columns_is_the_table_built_row_by_row(tmp_path):
    rows = [
        (f"item {unit}", rater, "" if (unit + len(rater)) % 7 == 0 else str(1 + (unit * 3 + len(rater)) % 5))
        for rater in ("ana", "bia", "carla")
        for unit in range(50)
    ]
    path = tmp_path / "judgments.csv"
    path.write_text("unit,rater,value\n" + "".join(f"{u}, {r} ,{v}\n" for u, r, v in rows), encoding="utf-8")
    from_rows = RatingTable.from_rows(
        [(u, r, int(v) if v else None) for u, r, v in rows], categories=[1, 2, 3, 4, 5]
    )
    from_csv = read_long_csv(path, level="ordinal")
    assert from_csv.units == from_rows.units
    assert from_csv.raters == from_rows.raters
    assert from_csv.categories == from_rows.categories
    assert (from_csv.codes == from_rows.codes).all()


def _both_readers(path, monkeypatch, **kwargs):
    """The table read by the plain path (string methods) and by pyarrow's reader, with the path it took."""
    from evaluation.agreement import longcsv

    plain_took = []
    real_plain = longcsv._plain_columns

    def plain(*args):
        found = real_plain(*args)
        plain_took.append(found is not None)
        return found

    monkeypatch.setattr(longcsv, "_plain_columns", plain)
    by_plain = read_long_csv(path, **kwargs)
    monkeypatch.setattr(longcsv, "_plain_columns", lambda *args: None)
    by_arrow = read_long_csv(path, **kwargs)
    return by_plain, by_arrow, plain_took[0]


@pytest.mark.parametrize(
    ("body", "plain"),
    [
        # Spaces around values, empty values, an extra column, unit codes seen again in later blocks.
        (
            "".join(f"u{u % 700}, r{u // 700} ,{'' if u % 11 == 0 else u % 5 + 1},x\n" for u in range(4900)),
            True,
        ),
        ("u1,r1,2,x\nu1,r2,3,x", True),  # no newline at the end
        ('u1,r1,2,x\n"u,1",r2,3,"a ""b"""\nu2,r1,3,x\n', False),  # quoted fields
        ("u1,r1,2,x\r\nu1,r2,3,x\r\n", False),  # Windows line ends
        ("u1,r1,2,x\n\nu1,r2,3,x\n", False),  # an empty line, which the CSV reader skips
        ("u1,r1,2,x\nu1,r2,3,x\n\n", False),
    ],
)
def test_a_plain_file_split_by_string_methods_is_the_table_pyarrow_reads(tmp_path, monkeypatch, body, plain):
    from evaluation.agreement import longcsv

    monkeypatch.setattr(longcsv, "_PLAIN_BLOCK", 1000)  # many blocks, lines cut across them
    path = tmp_path / "judgments.csv"
    path.write_bytes(("\ufeffunit,rater,value,note\n" + body).encode())
    by_plain, by_arrow, took_plain = _both_readers(path, monkeypatch, level="ordinal")
    assert took_plain is plain
    assert by_plain.units == by_arrow.units and by_plain.raters == by_arrow.raters
    assert by_plain.categories == by_arrow.categories and by_plain.scale_source == by_arrow.scale_source
    assert by_plain.codes.dtype == by_arrow.codes.dtype and (by_plain.codes == by_arrow.codes).all()


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("u1,r1,2\nu1,r2\nu2,r1,3\n", "line 3: 2 field(s) where the header has 3"),
        ("u1,r1,2\nu1,r2,3,4\nu2,r1\n", "line 3: 4 field(s) where the header has 3"),
        ("u1,r1,2\nu1,,3\n", "line 3: rater is empty"),
    ],
)
def test_a_file_that_is_not_plain_is_refused_by_the_csv_reader_with_its_line(tmp_path, body, message):
    from evaluation.agreement import AgreementInputError

    path = tmp_path / "judgments.csv"
    path.write_text("unit,rater,value\n" + body)
    with pytest.raises(AgreementInputError, match=message.replace("(", r"\(").replace(")", r"\)")):
        read_long_csv(path)


def test_reading_a_plain_file_does_not_load_pyarrow(tmp_path):
    """pyarrow costs the agreement command ~50 MB of its 200 MB budget; a plain file does without it."""
    import json
    import os
    import subprocess
    import sys
    from pathlib import Path

    path = tmp_path / "judgments.csv"
    path.write_text(
        "unit,rater,value\n" + "".join(f"u{u},r{r},{(u + r) % 3}\n" for u in range(50) for r in range(3))
    )
    root = Path(__file__).resolve().parent.parent.parent
    script = (
        "import json, sys, django; django.setup()\n"
        "from evaluation.agreement.longcsv import read_long_csv\n"
        f"table = read_long_csv({str(path)!r})\n"
        "print(json.dumps([table.n_judgments, 'pyarrow' in sys.modules]))"
    )
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "causalqa_site.settings", "PYTHONPATH": str(root)}
    result = subprocess.run([sys.executable, "-c", script], cwd=root, env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout.strip().splitlines()[-1]) == [150, False]


def test_units_with_the_same_values_share_a_pattern():
    table = RatingTable.from_rows(
        [("a", "x", 1), ("a", "y", 2), ("b", "x", 1), ("b", "y", 2), ("c", "x", 2), ("c", "y", None)]
    )
    patterns = table.patterns
    assert sorted(patterns.sizes.tolist()) == [1, 2]
    assert patterns.of_unit[0] == patterns.of_unit[1] != patterns.of_unit[2]


@pytest.mark.parametrize("weights_name", [None, "linear", "quadratic"])
def test_a_complete_design_resampled_by_dense_products_equals_the_sparse_confusion_matrices(weights_name):
    """ExpliCa's raters each judge every item: the dense path must give each pair's resampled kappa exactly."""
    from evaluation.agreement.statistics import (
        _cells_of,
        _complete_pair_replicates,
        _pair_replicates,
    )

    rng = np.random.default_rng(8)
    truth = rng.integers(0, 6, 150)
    rows = [
        (unit, rater, int(np.clip(truth[unit] + rng.integers(-2, 3), 0, 5)))
        for rater in range(6)
        for unit in range(150)
    ]
    table = RatingTable.from_rows(rows, categories=list(range(6)))
    patterns, k = table.patterns, 6
    weight_matrix = kappa_weight_matrix(k, weights_name)
    pair_cells = [
        (np.arange(len(patterns.sizes)), patterns.codes[a] * k + patterns.codes[b])
        for a, b in combinations(range(6), 2)
    ]
    draws = next(iter(table.resampled(Bootstrap(resamples=200, seed=2))))
    sparse = _pair_replicates(
        draws, _cells_of(pair_cells, k, len(patterns.sizes), table.n_units), 15, k, weight_matrix
    )
    dense = _complete_pair_replicates(draws, patterns.codes, k, weight_matrix)
    assert np.isfinite(dense).all()
    assert np.abs(dense - sparse).max() < EXACT


def test_confusion_sums_by_numpy_equal_scipys_sparse_product(monkeypatch):
    """Small resamples sum draw counts with numpy (no scipy import); large ones with a sparse product: the same
    numbers, bit for bit (whole numbers, exact in float32)."""
    from evaluation.agreement import statistics

    table = random_table(5, n_units=400, n_raters=4).pairable()
    patterns, k = table.patterns, len(table.categories)
    pair_cells = []
    for a, b in combinations(range(table.n_raters), 2):
        both = np.flatnonzero((patterns.codes[a] != MISSING) & (patterns.codes[b] != MISSING))
        pair_cells.append((both, patterns.codes[a, both] * k + patterns.codes[b, both]))
    cells_of = statistics._cells_of(pair_cells, k, len(patterns.sizes), table.n_units)
    draws = next(iter(table.resampled(Bootstrap(resamples=300, seed=4))))
    by_numpy = cells_of.sums(draws)
    monkeypatch.setattr(statistics, "_NUMPY_TERMS", 0)
    by_scipy = cells_of.sums(draws)
    assert by_numpy.shape == (300, len(pair_cells) * k * k)
    assert np.array_equal(by_numpy, by_scipy)
    # and each pair's confusion matrix is the draws of the units both raters judged, counted cell by cell
    first_pair = by_numpy[:, : k * k].reshape(300, k, k)
    both, cells = pair_cells[0]
    expected = np.zeros((300, k * k))
    for pattern, cell in zip(both, cells):
        expected[:, cell] += draws[:, pattern]
    assert np.array_equal(first_pair.reshape(300, -1), expected)
