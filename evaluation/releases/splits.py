"""Seeded, stratified train / dev / test splits in which the items of one group never straddle two splits.

Pure functions: the same units, ratios and seed always give the same assignment.
"""

import random
from collections import Counter, defaultdict
from operator import attrgetter
from typing import NamedTuple

SPLITS = ("train", "dev", "test")
DEFAULT_RATIOS = {"train": 0.8, "dev": 0.1, "test": 0.1}


class SplitRatioError(ValueError):
    pass


class SplitUnit(NamedTuple):
    """Items that must land in the same split: a group, or one ungrouped item. ``stratum`` is its causal class.

    (A named tuple: a release of 100,000 items makes one per ungrouped item.)"""

    key: str
    stratum: str
    size: int


def parse_ratios(text: str | dict | list | tuple) -> dict[str, float]:
    """``"0.8,0.1,0.1"`` (or a list or a dict by split name) → {"train": .8, "dev": .1, "test": .1}."""
    if isinstance(text, dict):
        unknown = set(text) - set(SPLITS)
        if unknown:
            raise SplitRatioError(
                f"unknown split(s) {', '.join(sorted(unknown))}; the splits are train, dev, test"
            )
        values = [text.get(name, 0) for name in SPLITS]
    elif isinstance(text, str):
        values = [part.strip() for part in text.split(",")]
    else:
        values = list(text)
    if len(values) != 3:
        raise SplitRatioError(f"give three ratios, for train, dev and test (got {len(values)})")
    try:
        numbers = [float(value) for value in values]
    except (TypeError, ValueError) as exc:
        raise SplitRatioError(f"split ratios must be numbers: {values}") from exc
    # A split may take everything (0,0,1: a published benchmark evaluated whole, as its test set).
    if any(number < 0 for number in numbers):
        raise SplitRatioError("split ratios cannot be negative")
    if abs(sum(numbers) - 1) > 1e-6:
        raise SplitRatioError(f"split ratios must add up to 1 (they add up to {sum(numbers):g})")
    return dict(zip(SPLITS, numbers))


def group_stratum(classes: list[str]) -> str:
    """A group's stratum is its most frequent causal class (the first in alphabetical order on a tie)."""
    counts = Counter(classes)
    return min(counts, key=lambda label: (-counts[label], label))


def assign_splits(
    units: list[SplitUnit], ratios: dict[str, float], seed: int
) -> tuple[dict[str, str], list[str]]:
    """Each unit's split, and the units in their seeded order (which fixes item positions within a split).

    Within each stratum the units are shuffled, then placed largest first, each into the split furthest
    below its target share of the stratum's items. A split with a share above 0 that ends up empty
    (tiny releases) takes one unit from the fullest split, so every split can be loaded.
    """
    rng = random.Random(seed)
    order = sorted(units, key=attrgetter("key"))
    rng.shuffle(order)
    by_stratum: dict[str, list[SplitUnit]] = defaultdict(list)
    for unit in order:
        by_stratum[unit.stratum].append(unit)

    assignment: dict[str, str] = {}
    filled = Counter()
    for stratum in sorted(by_stratum):
        members = sorted(
            by_stratum[stratum], key=lambda unit: -unit.size
        )  # stable: keeps the shuffle on ties
        total = sum(unit.size for unit in members)
        targets = [ratios[name] * total for name in SPLITS]
        placed = [0] * len(SPLITS)
        for unit in members:
            # The split furthest below its target; on a tie, the first of SPLITS (a plain loop: this runs
            # once per unit, 100,000 times for a large release).
            best, best_gap = 0, targets[0] - placed[0]
            for index in range(1, len(SPLITS)):
                gap = targets[index] - placed[index]
                if gap > best_gap:
                    best, best_gap = index, gap
            assignment[unit.key] = SPLITS[best]
            placed[best] += unit.size
        filled.update(dict(zip(SPLITS, placed)))

    for split in SPLITS:
        if ratios[split] > 0 and filled[split] == 0 and len(units) >= 2:
            donor = max(SPLITS, key=lambda name: (filled[name], -SPLITS.index(name)))
            candidates = [unit for unit in reversed(order) if assignment[unit.key] == donor]
            if len(candidates) > 1:
                moved = min(candidates, key=lambda unit: unit.size)
                assignment[moved.key] = split
                filled[donor] -= moved.size
                filled[split] += moved.size
    return assignment, [unit.key for unit in order]
