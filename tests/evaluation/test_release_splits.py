"""Splits are stratified by causal class, keep groups whole, and depend only on the items and the seed."""

from collections import Counter

import pytest

from evaluation.releases.splits import SplitRatioError, SplitUnit, assign_splits, group_stratum, parse_ratios

RATIOS = {"train": 0.8, "dev": 0.1, "test": 0.1}


def singletons(counts: dict[str, int]) -> list[SplitUnit]:
    return [SplitUnit(f"{label}-{n}", label, 1) for label, total in counts.items() for n in range(total)]


def test_each_class_is_split_in_the_requested_proportions():
    units = singletons({"associational": 300, "interventional": 150, "counterfactual": 50})
    assignment, _order = assign_splits(units, RATIOS, seed=1)
    by_class = Counter((unit.stratum, assignment[unit.key]) for unit in units)
    assert by_class[("associational", "train")] == 240 and by_class[("associational", "dev")] == 30
    assert by_class[("interventional", "train")] == 120 and by_class[("interventional", "test")] == 15
    assert by_class[("counterfactual", "train")] == 40 and by_class[("counterfactual", "dev")] == 5


def test_groups_never_straddle_two_splits_and_the_split_sizes_stay_close():
    units = [SplitUnit(f"g{n}", ["a", "b", "c"][n % 3], size=1 + n % 4) for n in range(200)]
    assignment, _order = assign_splits(units, RATIOS, seed=3)
    assert set(assignment) == {unit.key for unit in units}  # one split per group, so no group can straddle
    sizes = Counter()
    for unit in units:
        sizes[assignment[unit.key]] += unit.size
    total = sum(sizes.values())
    assert abs(sizes["train"] / total - 0.8) < 0.02 and abs(sizes["test"] / total - 0.1) < 0.02


def test_the_same_seed_gives_the_same_splits_and_order_and_another_seed_does_not():
    units = singletons({"a": 40, "b": 40})
    first = assign_splits(units, RATIOS, seed=5)
    assert assign_splits(list(reversed(units)), RATIOS, seed=5) == first
    assert assign_splits(units, RATIOS, seed=6) != first


def test_tiny_releases_still_fill_every_split():
    assignment, _order = assign_splits(singletons({"a": 3, "b": 2}), RATIOS, seed=1)
    assert set(assignment.values()) == {"train", "dev", "test"}


def test_a_split_with_no_share_stays_empty():
    assignment, _order = assign_splits(singletons({"a": 30}), {"train": 0.9, "dev": 0.1, "test": 0.0}, seed=1)
    assert "test" not in assignment.values()


def test_a_group_is_stratified_by_its_most_frequent_class():
    assert group_stratum(["b", "a", "b"]) == "b"
    assert group_stratum(["b", "a"]) == "a"  # a tie goes to the first label alphabetically


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("0.8,0.1,0.1", RATIOS),
        ([0.7, 0.2, 0.1], {"train": 0.7, "dev": 0.2, "test": 0.1}),
        ({"train": 1.0}, {"train": 1.0, "dev": 0.0, "test": 0.0}),
    ],
)
def test_ratios_are_read_from_text_lists_and_dicts(given, expected):
    assert parse_ratios(given) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ("0.8,0.1", "three ratios"),
        ("0.8,0.3,0.1", "add up to 1"),
        ("a,b,c", "numbers"),
        ("1.1,-0.1,0", "negative"),
        ({"validation": 1}, "unknown split"),
    ],
)
def test_bad_ratios_are_refused_with_a_reason(given, message):
    with pytest.raises(SplitRatioError, match=message):
        parse_ratios(given)
