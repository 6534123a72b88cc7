"""Which keys the item page answers, for the ``?`` panel: read from what the item's design asks (its criteria and
their keys, whether a vote, how many class labels) and from what the page offers, so that a design lists exactly
the keys it has (ExpliCa: the 1–9 and 0 rating keys, no vote, no class). static/annotation/keys.js acts on the same
page: a key whose field is absent does nothing."""

from .forms import rating_keys
from .judging import judgment_rules
from .models import Assignment


def keyboard_for(project, item, *, assignment, change_form) -> dict:
    item.project = project
    active = assignment is not None and assignment.status == Assignment.Status.ACTIVE
    judging = assignment is not None and assignment.round > 0 and (active or change_form is not None)
    answering = assignment is not None and assignment.round == 0
    keys: dict = {
        "judging": judging,
        "change": change_form is not None,
        "answer": answering and active,
        "skip": answering and active,
        "unskip": answering and assignment.status == Assignment.Status.SKIPPED,
        "rating_keys": [],
        "vote": False,
        "labels": 0,
    }
    if judging:
        rules = judgment_rules(item)
        digits = []
        for criterion in rules.criteria:
            for key in rating_keys(criterion).values():
                if key not in digits:
                    digits.append(key)
        keys.update(rating_keys=_ranges(digits), vote=rules.asks_vote, labels=min(len(rules.labels), 9))
    return keys


def _ranges(digits: list[str]) -> list[str]:
    """``["1", "2", "3", "0"]`` → ``["1–3", "0"]``: runs of consecutive digits, in the order the keys come."""
    runs: list[list[str]] = []
    for digit in digits:
        if runs and digit.isdigit() and runs[-1][-1].isdigit() and int(digit) == int(runs[-1][-1]) + 1:
            runs[-1].append(digit)
        else:
            runs.append([digit])
    return [run[0] if len(run) == 1 else f"{run[0]}–{run[-1]}" for run in runs]
