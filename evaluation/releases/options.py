"""What a curator chooses when cutting a release, with its defaults and limits: one list every door reads.

The page's form (``evaluation.forms.ReleaseForm``), the API's input (``ReleaseCreateInputSerializer``) and
the ``release`` command offer exactly these options with these defaults; ``evaluation.services.release_create``
checks them all (the doors' own checks only give earlier, friendlier messages).
"""

from .splits import DEFAULT_RATIOS

SEED_MIN, SEED_MAX = -(2**31), 2**31 - 1
LICENSE_MAX_LENGTH = 64
TEXT_MAX_LENGTH = 5000  # citation and notes
STRATUM_FIELD_MAX_LENGTH = 64

# option → default. ``split_ratios``: train/dev/test shares; ``subsample``: {"field", "max_per_stratum"} or None.
RELEASE_OPTIONS = {
    "seed": 13,
    "split_ratios": dict(DEFAULT_RATIOS),
    "license": "cc-by-4.0",
    "citation": "",
    "notes": "",
    "subsample": None,
}
