"""The preprocessing funnel of Causal_QA.PT section 3.1, as pure functions.

rows read → causal rows → unique (after normalising case, whitespace and
punctuation; accents kept) → within length bounds (at least 4 words, at most
Q3 + 1.5·IQR of the word counts of the unique rows) → imported.
"""

import hashlib
import math
import re
from dataclasses import dataclass

import numpy as np

MIN_WORDS = 4
# Runs of anything that is not a letter or digit (punctuation, symbols, whitespace, "_").
_NOT_WORD = re.compile(r"[\W_]+")


def normalise(text: str) -> str:
    """Case-folded, punctuation removed, whitespace collapsed; accents are kept."""
    return _NOT_WORD.sub(" ", text.casefold()).strip()


def text_key(text: str) -> str:
    return hashlib.sha1(normalise(text).encode("utf-8")).hexdigest()


def word_count(text: str) -> int:
    return len(text.split())


@dataclass(frozen=True)
class LengthBounds:
    min_words: int
    max_words: float
    q1: float
    q3: float

    @property
    def iqr(self) -> float:
        return self.q3 - self.q1

    def as_dict(self) -> dict:
        # No rows left: no upper bound. JSON has no Infinity (PostgreSQL refuses it), so it is stored as null.
        max_words = self.max_words if math.isfinite(self.max_words) else None
        return {"min_words": self.min_words, "max_words": max_words, "q1": self.q1, "q3": self.q3}


def length_bounds(counts, min_words: int = MIN_WORDS) -> LengthBounds:
    """Quartiles by linear interpolation (numpy's default, as pandas' ``quantile``)."""
    if len(counts) == 0:
        return LengthBounds(min_words, float("inf"), 0.0, 0.0)
    q1, q3 = (float(value) for value in np.percentile(np.asarray(counts), [25, 75]))
    return LengthBounds(min_words, q3 + 1.5 * (q3 - q1), q1, q3)
