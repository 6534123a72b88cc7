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
    return question_digest(text).hex()


def _latin1_table() -> bytes:
    """``normalise`` of each Latin-1 character, as one byte: a space for what it removes, NUL for the two whose
    case fold is not one Latin-1 character (ß → ss, µ → μ). Worked out by ``normalise`` itself."""
    table = bytearray(256)
    for code in range(256):
        folded = chr(code).casefold()
        if len(folded) != 1 or ord(folded) > 255:
            table[code] = 0
        elif _NOT_WORD.fullmatch(folded):
            table[code] = 32
        else:
            table[code] = ord(folded)
    return bytes(table)


_LATIN1 = _latin1_table()


def question_digest(text: str) -> bytes:
    """SHA-1 of the UTF-8 of ``normalise(text)``: the bytes of the text key (``text_key`` is their hex).

    A text of Latin-1 characters (most Portuguese, Spanish and English questions) is normalised byte by byte
    through a table of ``normalise``'s own results, then its runs of spaces are collapsed: what the regular
    expression gives, without running a regular expression per text (the import's hot loop; see
    ``benchmarks/import_questions.py``). Any other text goes through
    ``normalise`` itself."""
    try:
        mapped = text.encode("latin-1").translate(_LATIN1)
    except UnicodeEncodeError:
        mapped = b"\x00"
    if b"\x00" in mapped:
        return hashlib.sha1(normalise(text).encode("utf-8")).digest()
    folded = b" ".join(mapped.split())
    return hashlib.sha1(folded if folded.isascii() else folded.decode("latin-1").encode("utf-8")).digest()


def word_count(text: str) -> int:
    return len(text.split())


@dataclass(frozen=True)
class LengthBounds:
    min_words: int
    max_words: float
    q1: float
    q3: float

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
