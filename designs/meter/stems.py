"""METER's question stems and option letters: which stem a question starts from, where each option goes.

Plain Python (no Django): the stem bank is data (``designs/meter/data/meter.json``), the choices are
seeded, so the same entry, level and seed always give the same stem and the same letters.
"""

import json
import random
from collections import Counter
from functools import lru_cache
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data"  # the example dataset and the stem bank

LEVELS = ("L1", "L2", "L3")
ROLES = ("correct", "contradictory", "unfounded", "reversal", "irrelevant")
LETTERS = "ABCDE"


@lru_cache(maxsize=4)
def stem_bank(language: str) -> dict[str, list[str]]:
    """The stems of each level in ``language`` (Portuguese for pt*, English otherwise): 8 / 4 / 5 as in the paper."""
    stems = json.loads((DATA / "meter.json").read_text(encoding="utf-8"))["stems"]
    suffix = "" if language.lower().startswith("pt") else "_en"
    return {level: list(stems[level + suffix]) for level in LEVELS}


def stem_for(*, entry: str, level: str, language: str, seed: int) -> str:
    """The stem a question of ``level`` for ``entry`` is built from (seeded, so reruns agree)."""
    return random.Random(f"{seed}:stem:{entry}:{level}").choice(stem_bank(language)[level])


def option_positions(*, key: str, seed: int) -> dict[str, int]:
    """Role → position (0 = A) for one question: a seeded shuffle of the five options."""
    positions = list(range(len(ROLES)))
    random.Random(f"{seed}:options:{key}").shuffle(positions)
    return dict(zip(ROLES, positions))


def letter_balance(letters: list[str]) -> dict:
    """How often each letter holds the correct option, against an even spread.

    ``chi_square`` is Pearson's statistic over the five letters (4 degrees of freedom: above 9.49 the spread
    is uneven at the 5% level); ``max_share`` is the largest letter's share.
    """
    counts = Counter(letters)
    total = sum(counts[letter] for letter in LETTERS)
    expected = total / len(LETTERS) if total else 0
    chi_square = sum((counts[letter] - expected) ** 2 / expected for letter in LETTERS) if expected else 0.0
    return {
        "total": total,
        "counts": {letter: counts[letter] for letter in LETTERS},
        "expected": round(expected, 2),
        "chi_square": round(chi_square, 3),
        "even": chi_square <= 9.49,
        "max_share": round(max(counts[letter] for letter in LETTERS) / total, 3) if total else 0.0,
    }
