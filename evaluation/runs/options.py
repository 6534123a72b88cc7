"""What a benchmark run may be asked for, with its defaults and bounds: one list every door reads.

The page's form (``evaluation.forms.RunForm``), the API's input (``RunCreateInputSerializer``) and the
``evaluate`` command offer these options with these defaults; ``evaluation.runs.services.run_create`` checks
the bounds (the doors' own checks only give earlier, friendlier messages).
"""

from ..releases.options import SEED_MAX, SEED_MIN

# option → default
RUN_OPTIONS = {"repetitions": 1, "seed": 13, "few_shot": 3, "bertscore_layer": None}
# option → (lowest, highest) accepted, both included. BERTScore's layer: the deepest BERT-like models have 48.
RUN_BOUNDS = {
    "repetitions": (1, 10),
    "seed": (SEED_MIN, SEED_MAX),
    "few_shot": (0, 20),
    "bertscore_layer": (1, 48),
}


def run_option_bounds(name: str) -> dict:
    """``min_value`` and ``max_value`` of an option, as Django's and DRF's number fields take them."""
    lowest, highest = RUN_BOUNDS[name]
    return {"min_value": lowest, "max_value": highest}


def run_option_in_bounds(name: str, value) -> bool:
    lowest, highest = RUN_BOUNDS[name]
    return isinstance(value, int) and not isinstance(value, bool) and lowest <= value <= highest
