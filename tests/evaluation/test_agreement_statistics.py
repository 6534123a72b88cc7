"""Each agreement statistic against published worked examples, the libraries, and the edge cases of real projects."""

import math

import krippendorff
import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from evaluation.agreement import (
    LEVELS,
    AgreementInputError,
    Bootstrap,
    RatingTable,
    agreement_summary,
    cohen_kappa,
    fleiss_kappa,
    krippendorff_alpha,
    landis_koch,
)
from evaluation.agreement.statistics import (
    _unit_coincidences,
    alpha_replicates,
    fleiss_from_counts,
    kappa_from_confusion,
    kappa_weight_matrix,
)

# Krippendorff (2011), "Computing Krippendorff's alpha-reliability", p. 8: 4 observers, 12 units, values 1-5.
KRIPPENDORFF_2011 = {
    "A": [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
    "B": [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
    "C": [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
    "D": [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
}
KRIPPENDORFF_2011_ALPHA = {"nominal": 0.743, "ordinal": 0.815, "interval": 0.849, "ratio": 0.797}

# Fleiss' kappa worked example (Wikipedia, "Fleiss' kappa"): 10 subjects, 14 raters, 5 categories; kappa 0.210.
FLEISS_EXAMPLE = [
    [0, 0, 0, 0, 14],
    [0, 2, 6, 4, 2],
    [0, 0, 3, 5, 6],
    [0, 3, 9, 2, 0],
    [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0],
    [3, 2, 6, 3, 0],
    [2, 5, 3, 2, 2],
    [6, 5, 2, 1, 0],
    [0, 2, 2, 3, 7],
]

# Gwet's "cont3x3abstractors" (irrCAC): kappa2.table gives 0.7964094, quadratic weights 0.8921569.
ABSTRACTORS = [[13, 0, 0], [0, 20, 7], [0, 4, 56]]


def table_from_columns(columns: dict, categories=None) -> RatingTable:
    rows = [(unit, rater, value) for rater, values in columns.items() for unit, value in enumerate(values)]
    return RatingTable.from_rows(rows, categories=categories)


def table_from_counts(counts) -> RatingTable:
    """A subjects × categories count table as judgments by anonymous, distinct raters."""
    rows = []
    for unit, row in enumerate(counts):
        rater = 0
        for category, n in enumerate(row):
            for _ in range(n):
                rows.append((unit, rater, category))
                rater += 1
    return RatingTable.from_rows(rows, categories=list(range(len(counts[0]))))


def table_from_contingency(contingency) -> RatingTable:
    rows, unit = [], 0
    for a, line in enumerate(contingency):
        for b, n in enumerate(line):
            for _ in range(n):
                rows += [(unit, "first", a), (unit, "second", b)]
                unit += 1
    return RatingTable.from_rows(rows, categories=list(range(len(contingency))))


@pytest.mark.parametrize("level", LEVELS)
def test_krippendorff_alpha_matches_krippendorffs_worked_example(level):
    table = table_from_columns(KRIPPENDORFF_2011, categories=[1, 2, 3, 4, 5])
    alpha = krippendorff_alpha(table, level=level)
    assert round(alpha.value, 3) == KRIPPENDORFF_2011_ALPHA[level]
    assert alpha.n_units == 11  # the unit judged once carries no pairable value


def test_fleiss_kappa_matches_the_worked_example():
    estimate = fleiss_kappa(table_from_counts(FLEISS_EXAMPLE))
    assert round(estimate.value, 3) == 0.210
    assert landis_koch(estimate.value) == "fair"


def test_cohen_kappa_matches_gwets_published_values():
    table = table_from_contingency(ABSTRACTORS)
    assert cohen_kappa(table).mean.value == pytest.approx(0.7964094, abs=1e-7)
    assert cohen_kappa(table, weights="quadratic").mean.value == pytest.approx(0.8921569, abs=1e-7)


def test_cohen_kappa_matches_the_textbook_two_by_two_example():
    # Wikipedia, "Cohen's kappa": 50 proposals, yes/yes 20, yes/no 5, no/yes 10, no/no 15 → κ = 0.4.
    assert cohen_kappa(table_from_contingency([[20, 5], [10, 15]])).mean.value == pytest.approx(0.4)


def test_with_two_raters_the_mean_is_their_kappa():
    table = table_from_columns({"x": [1, 2, 3, 3, 2, 1], "y": [1, 2, 3, 2, 2, 1]})
    result = cohen_kappa(table)
    assert len(result.pairs) == 1 and result.mean.value == result.pairs[0].estimate.value


def test_the_mean_kappa_is_the_mean_of_the_pairs_each_on_the_units_both_judged():
    table = table_from_columns(KRIPPENDORFF_2011, categories=[1, 2, 3, 4, 5])
    result = cohen_kappa(table, weights="linear")
    for pair in result.pairs:
        a, b = KRIPPENDORFF_2011[pair.rater_a], KRIPPENDORFF_2011[pair.rater_b]
        shared = [(x, y) for x, y in zip(a, b) if x is not None and y is not None]
        assert pair.estimate.n_units == len(shared)
        expected = cohen_kappa_score(*zip(*shared), labels=[1, 2, 3, 4, 5], weights="linear")
        assert pair.estimate.value == pytest.approx(expected)
    assert result.mean.value == pytest.approx(np.mean([p.estimate.value for p in result.pairs]))


def test_fleiss_kappa_uses_the_units_with_two_judgments_and_says_how_many():
    table = table_from_columns(KRIPPENDORFF_2011, categories=[1, 2, 3, 4, 5])
    assert fleiss_kappa(table).n_units == 11


def test_fleiss_kappa_with_equal_judgments_per_unit_is_the_1971_formula():
    rng = np.random.default_rng(3)
    counts = rng.multinomial(6, [0.2, 0.3, 0.5], size=30)
    n = 6
    p_i = ((counts**2).sum(1) - n) / (n * (n - 1))
    p_j = counts.sum(0) / counts.sum()
    expected = (p_i.mean() - (p_j**2).sum()) / (1 - (p_j**2).sum())
    assert fleiss_from_counts(counts, np.ones(30))[0] == pytest.approx(expected)


def test_a_category_nobody_used_changes_neither_kappa_nor_nominal_alpha_but_counts_on_an_ordinal_scale():
    columns = {"a": [1, 2, 2, 1, 2], "b": [1, 2, 1, 1, 2], "c": [2, 2, 2, 1, 2]}
    narrow = table_from_columns(columns, categories=[1, 2])
    wide = table_from_columns(columns, categories=[1, 2, 3, 4, 5])
    assert cohen_kappa(narrow).mean.value == pytest.approx(cohen_kappa(wide).mean.value)
    assert fleiss_kappa(narrow).value == pytest.approx(fleiss_kappa(wide).value)
    assert krippendorff_alpha(narrow).value == pytest.approx(krippendorff_alpha(wide).value)
    # Categories between used ones widen ordinal distances (Krippendorff's ordinal metric counts them).
    gap = {"a": [1, 5, 5, 1, 5], "b": [1, 5, 1, 1, 5], "c": [5, 5, 5, 1, 5]}
    with_gap = krippendorff_alpha(table_from_columns(gap, categories=[1, 2, 3, 4, 5]), level="ordinal")
    assert with_gap.value == pytest.approx(
        krippendorff.alpha(
            value_counts=with_gap_counts(gap), value_domain=[1, 2, 3, 4, 5], level_of_measurement="ordinal"
        )
    )


def with_gap_counts(columns):
    return table_from_columns(columns, categories=[1, 2, 3, 4, 5]).pairable().value_counts


def test_skipped_items_and_uneven_judgments_are_handled():
    columns = {"a": [1, None, 2, 1, None, 3], "b": [1, 2, None, 1, 3, 3], "c": [None, 2, 2, 2, None, None]}
    table = table_from_columns(columns)
    summary = agreement_summary(table, level="nominal", bootstrap=Bootstrap(resamples=200))
    assert summary.n_units == 6 and summary.n_judgments == 12
    assert summary.fleiss.n_units == 5  # unit 4 was judged once
    assert summary.krippendorff.value == pytest.approx(
        krippendorff.alpha(
            reliability_data=[[np.nan if v is None else v for v in c] for c in columns.values()],
            level_of_measurement="nominal",
        )
    )
    assert summary.cohen.mean.value is not None


def test_a_single_rater_gets_an_explanation_not_a_number():
    table = table_from_columns({"alone": [1, 2, 3, 1]})
    summary = agreement_summary(table, bootstrap=Bootstrap(resamples=50))
    for estimate in (summary.fleiss, summary.krippendorff, summary.cohen.mean):
        assert estimate.value is None and "two raters" in estimate.note
    assert summary.cohen.pairs == []
    flat = summary.as_flat_dict()
    assert (
        flat["fleiss_kappa"] is None
        and flat["krippendorff_alpha"] is None
        and flat["cohen_kappa"]["mean"] is None
    )


def test_identical_raters_agree_perfectly_when_they_use_several_values():
    same = [1, 2, 3, 2, 1, 3]
    summary = agreement_summary(table_from_columns({"a": same, "b": same, "c": same}))
    assert summary.fleiss.value == pytest.approx(1) and summary.krippendorff.value == pytest.approx(1)
    assert summary.cohen.mean.value == pytest.approx(1)
    assert summary.fleiss.reading == "almost perfect" and summary.krippendorff.reading == "reliable"


def test_identical_raters_who_all_gave_one_value_get_an_undefined_statistic_with_the_reason():
    summary = agreement_summary(
        table_from_columns({"a": [4, 4, 4], "b": [4, 4, 4]}, categories=[1, 2, 3, 4, 5]),
        level="ordinal",
        bootstrap=Bootstrap(resamples=50),
    )
    for estimate in (summary.fleiss, summary.krippendorff, summary.cohen.pairs[0].estimate):
        assert estimate.value is None
        assert "“4”" in estimate.note and "undefined" in estimate.note
    assert "No pair" in summary.cohen.mean.note
    assert not any(isinstance(v, float) and math.isnan(v) for v in summary.as_flat_dict().values())


def test_raters_who_never_judged_the_same_unit_have_no_kappa():
    summary = agreement_summary(table_from_columns({"a": [1, 2, None, None], "b": [None, None, 1, 2]}))
    assert summary.cohen.pairs[0].estimate.value is None
    assert "no unit in common" in summary.cohen.pairs[0].estimate.note
    assert summary.fleiss.value is None and "No unit has two judgments" in summary.fleiss.note


def test_perfect_disagreement_is_negative_and_read_as_poor():
    kappa = cohen_kappa(table_from_columns({"a": [1, 2, 1, 2], "b": [2, 1, 2, 1]})).mean
    assert kappa.value == pytest.approx(-1) and kappa.reading == "poor"


@pytest.mark.parametrize(
    ("value", "reading"),
    [
        (-0.1, "poor"),
        (0.0, "slight"),
        (0.2, "slight"),
        (0.21, "fair"),
        (0.4, "fair"),
        (0.5, "moderate"),
        (0.61, "substantial"),
        (0.8, "substantial"),
        (0.81, "almost perfect"),
        (1.0, "almost perfect"),
        (None, ""),
    ],
)
def test_landis_koch_readings(value, reading):
    assert landis_koch(value) == reading


def test_bootstrap_intervals_are_seeded_and_contain_the_estimate():
    table = table_from_columns(KRIPPENDORFF_2011, categories=[1, 2, 3, 4, 5])
    first = agreement_summary(table, level="interval", bootstrap=Bootstrap(resamples=500, seed=7)).as_dict()
    again = agreement_summary(table, level="interval", bootstrap=Bootstrap(resamples=500, seed=7)).as_dict()
    other = agreement_summary(table, level="interval", bootstrap=Bootstrap(resamples=500, seed=8)).as_dict()
    assert first == again and first != other
    for key in ("fleiss_kappa", "krippendorff_alpha"):
        low, high = first[key]["ci95"]
        assert low <= first[key]["value"] <= high
    low, high = first["cohen_kappa"]["ci95"]
    assert low <= first["cohen_kappa"]["mean"] <= high


@pytest.mark.parametrize("level", LEVELS)
def test_the_bulk_alpha_of_each_resample_equals_the_krippendorff_package(level):
    counts = table_from_columns(KRIPPENDORFF_2011, categories=[1, 2, 3, 4, 5]).pairable().value_counts
    domain = np.array([1, 2, 3, 4, 5]) if level in ("interval", "ratio") else np.arange(5)
    weights = np.random.default_rng(0).integers(0, 3, size=(20, len(counts)))
    bulk = alpha_replicates(_unit_coincidences(counts), weights, domain, level)
    for row, value in zip(weights, bulk):
        resampled = np.repeat(counts, row, axis=0)
        if (resampled.sum(axis=0) > 0).sum() < 2:
            assert np.isnan(value)
            continue
        assert value == pytest.approx(
            krippendorff.alpha(value_counts=resampled, value_domain=domain, level_of_measurement=level)
        )


@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
def test_the_bulk_kappa_of_each_resample_equals_scikit_learn(weights):
    rng = np.random.default_rng(1)
    for _ in range(20):
        a, b = rng.integers(0, 4, 30), rng.integers(0, 4, 30)
        confusion = np.zeros((4, 4))
        np.add.at(confusion, (a, b), 1)
        bulk = kappa_from_confusion(confusion[None], kappa_weight_matrix(4, weights))[0]
        assert bulk == pytest.approx(cohen_kappa_score(a, b, labels=[0, 1, 2, 3], weights=weights))


def test_a_rater_judging_a_unit_twice_is_an_input_error():
    with pytest.raises(AgreementInputError, match="more than once"):
        RatingTable.from_rows([("u1", "a", 1), ("u1", "a", 2)])


def test_a_value_outside_the_categories_is_an_input_error():
    with pytest.raises(AgreementInputError, match="not one of the categories"):
        RatingTable.from_rows([("u1", "a", 7)], categories=[1, 2, 3])
