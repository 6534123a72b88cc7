"""Figures of closed-format answers, from plain rows (no database): accuracy by any breakdown, chance,
group accuracy (CausalBench), errors by distractor role (METER), task × variant cells and the
differences between cells a curator defines (CausalityCheck's challenges).

A row is one answer: ``{"model", "condition", "repetition", "item", "group", "correct",
"unparsed", "failed", "role", "n_options", <breakdown keys>...}``; ``correct`` is False for an
unparsed or failed answer (they count as wrong, and are counted apart).
"""

import re
from collections import defaultdict
from dataclasses import dataclass
from statistics import mean

ERROR_ROLES = ["contradictory", "unfounded", "reversal", "irrelevant", "other"]


def accuracy(rows: list[dict]) -> dict:
    n = len(rows)
    right = sum(1 for row in rows if row["correct"])
    return {
        "n": n,
        "correct": right,
        "accuracy": right / n if n else None,
        "unparsed": sum(1 for row in rows if row.get("unparsed")),
        "failed": sum(1 for row in rows if row.get("failed")),
        "chance": chance(rows),
    }


def chance(rows: list[dict]) -> float | None:
    """Expected accuracy of guessing uniformly among each question's options (two for yes/no)."""
    sizes = [row.get("n_options") or 2 for row in rows]
    return mean(1 / size for size in sizes) if sizes else None


def grouped(rows: list[dict], keys: list[str]) -> dict[tuple, list[dict]]:
    groups: dict[tuple, list[dict]] = defaultdict(list)
    for row in rows:
        groups[tuple(row.get(key) for key in keys)].append(row)
    return dict(sorted(groups.items(), key=lambda entry: tuple(str(part) for part in entry[0])))


def accuracy_by(rows: list[dict], keys: list[str]) -> list[dict]:
    """One line per combination of ``keys`` (e.g. model, condition, level) with its accuracy and chance."""
    return [
        {**dict(zip(keys, values)), **accuracy(members)} for values, members in grouped(rows, keys).items()
    ]


def group_accuracy(rows: list[dict], keys: list[str], group_size: int | None = None) -> list[dict]:
    """Share of whole item groups whose every question is answered right (per repetition, then pooled), next to
    per-question accuracy and both chance baselines (CausalBench's group accuracy: all four perspectives right).

    Only whole groups count: a group with fewer questions than ``group_size`` (the design's, e.g. CausalBench's
    four; by default the most questions any group has here) would count "3 right of 3" as right, with a chance of
    1/8 instead of 1/16. Those groups are left out and counted in ``groups_left_out``. An answer that failed or
    could not be read is a question asked and answered wrong, not a missing one. Items without a group are left
    out; per-question accuracy is over every question answered.
    """
    result = []
    for values, members in grouped([row for row in rows if row.get("group")], keys).items():
        by_group: dict[tuple, list[dict]] = defaultdict(list)
        for row in members:
            by_group[(row["group"], row.get("repetition", 1))].append(row)
        # Within a series and repetition each question is answered once: a group's answers are its questions.
        sizes = {key: len(answers) for key, answers in by_group.items()}
        expected = group_size or max(sizes.values())
        whole = {key: answers for key, answers in by_group.items() if sizes[key] >= expected}
        left_out = {group for group, _repetition in by_group} - {group for group, _repetition in whole}
        all_right = [all(row["correct"] for row in answers) for answers in whole.values()]
        group_chance = [
            _product(1 / (row.get("n_options") or 2) for row in answers) for answers in whole.values()
        ]
        question = accuracy(members)
        result.append(
            {
                **dict(zip(keys, values)),
                "groups": len(all_right),
                "groups_correct": sum(all_right),
                "group_accuracy": sum(all_right) / len(all_right) if all_right else None,
                "group_chance": mean(group_chance) if group_chance else None,
                "group_size": expected,
                "groups_left_out": len(left_out),
                "left_out_reason": (
                    f"{len(left_out)} group(s) with fewer than {expected} questions: "
                    + ", ".join(sorted(map(str, left_out))[:10])
                )
                if left_out
                else "",
                "questions": question["n"],
                "question_accuracy": question["accuracy"],
                "question_chance": question["chance"],
            }
        )
    return result


def _product(values) -> float:
    total = 1.0
    for value in values:
        total *= value
    return total


def error_distribution(rows: list[dict], keys: list[str]) -> list[dict]:
    """Among wrong answers: how many chose each distractor role (METER Table 5), and how many could not be read."""
    result = []
    for values, members in grouped(rows, keys).items():
        wrong = [row for row in members if not row["correct"]]
        counts = {role: 0 for role in ERROR_ROLES}
        for row in wrong:
            if row.get("role"):
                role = row["role"] if row["role"] in counts else "other"
                counts[role] += 1
        chosen = sum(counts.values())
        result.append(
            {
                **dict(zip(keys, values)),
                "wrong": len(wrong),
                **counts,
                **{f"{role}_share": (counts[role] / chosen if chosen else None) for role in ERROR_ROLES},
                "unparsed": sum(1 for row in wrong if row.get("unparsed")),
                "failed": sum(1 for row in wrong if row.get("failed")),
            }
        )
    return result


# --- task × variant cells, and differences between them ------------------------------------------------


def cells(rows: list[dict], keys: list[str]) -> list[dict]:
    """Accuracy of every (task, variant) cell, per ``keys`` (model, condition)."""
    return accuracy_by(
        [row for row in rows if row.get("task") or row.get("variant")], keys + ["task", "variant"]
    )


class DifferenceError(ValueError):
    """A difference definition that cannot be read; the message names the line."""


@dataclass(frozen=True)
class Difference:
    name: str
    left: tuple[str, ...]
    right: tuple[str, ...]  # ("others",) means every task or variant not on the left

    def __str__(self) -> str:
        return f"{self.name} = {_term_text(self.left)} − {_term_text(self.right)}"


def _term_text(names: tuple[str, ...]) -> str:
    return names[0] if len(names) == 1 else f"mean({', '.join(names)})"


_LINE = re.compile(r"^\s*(?P<name>[^=]+?)\s*=\s*(?P<left>.+?)\s+-\s+(?P<right>.+?)\s*$")
_TERM = re.compile(r"^(?:acc|mean|média|media)?\s*\(\s*(?P<inner>.*?)\s*\)$", re.IGNORECASE)


def parse_differences(text: str) -> list[Difference]:
    """``Challenge 1 = AJ - PJ`` / ``Challenge 2 = Acc(VCR) - mean(PS, PU, ID)`` / ``… - mean(others)``,
    one per line (or separated by ';'). A name is a task, a variant, or ``task/variant``."""
    differences = []
    for number, line in enumerate(re.split(r"[\n;]", text or ""), start=1):
        if not line.strip() or line.strip().startswith("#"):
            continue
        match = _LINE.match(line)
        if not match:
            raise DifferenceError(
                f"line {number}: write it as 'Name = A - B' or 'Name = A - mean(B, C)': {line.strip()!r}"
            )
        left, right = _names(match.group("left"), number), _names(match.group("right"), number)
        differences.append(Difference(match.group("name").strip(), left, right))
    return differences


def _names(term: str, number: int) -> tuple[str, ...]:
    term = term.strip()
    inner = _TERM.match(term)
    if inner:
        term = inner.group("inner")
        nested = _TERM.match(term)  # mean(Acc(PS), Acc(PU))
        if nested:
            term = nested.group("inner")
    names = tuple(
        _TERM.match(part.strip()).group("inner") if _TERM.match(part.strip()) else part.strip()
        for part in term.split(",")
    )
    if not all(names):
        raise DifferenceError(f"line {number}: an empty name in {term!r}")
    return names


def difference_values(rows: list[dict], differences: list[Difference], keys: list[str]) -> list[dict]:
    """Each difference per ``keys`` (model, condition): the score of the left term minus that of the right.

    A name is a task, a variant or ``task/variant``, in any case (``AJ`` finds the stored ``aj``). Its score is
    a mean of units, as CausalityCheck's Table 1 says: a cell's score is its accuracy, a task's the mean of its
    cells' scores, a variant's the mean of its tasks' cells; so a task with four times the items (CVA) weighs no
    more than another. A term of several names is the mean of their scores. Each term's value and how many
    answers it rests on are given in ``terms``; a name no row carries leaves the difference empty.
    """
    result = []
    for values, members in grouped(rows, keys).items():
        known = {_fold(row.get("task")) for row in members} | {_fold(row.get("variant")) for row in members}
        known.discard("")
        for difference in differences:
            right = difference.right
            if right == ("others",):
                left_kinds = {
                    "task" if any(_fold(row.get("task")) == _fold(name) for row in members) else "variant"
                    for name in difference.left
                }
                kind = left_kinds.pop() if len(left_kinds) == 1 else "task"
                left = {_fold(name) for name in difference.left}
                right = tuple(
                    sorted(
                        {
                            row.get(kind)
                            for row in members
                            if row.get(kind) and _fold(row.get(kind)) not in left
                        }
                    )
                )
            scores = {name: unit_score(members, name) for name in difference.left + right}
            left_value, right_value = _term(scores, difference.left), _term(scores, right)
            missing = [
                name for name in difference.left + right if "/" not in name and _fold(name) not in known
            ]
            value = left_value - right_value if left_value is not None and right_value is not None else None
            result.append(
                {
                    **dict(zip(keys, values)),
                    "difference": difference.name,
                    "definition": str(difference),
                    "left": left_value,
                    "right": right_value,
                    "value": value,
                    "terms": "; ".join(_term_line(name, *scores[name]) for name in scores),
                    "missing": ", ".join(missing),
                }
            )
    return result


def _term_line(name: str, value: float | None, n: int) -> str:
    return f"{name} = {'—' if value is None else f'{value:.4f}'} ({n} answers)"


def _fold(text) -> str:
    return str(text or "").strip().casefold()


def _term(scores: dict, names: tuple[str, ...]) -> float | None:
    values = [scores[name][0] for name in names]
    if not values or any(value is None for value in values):
        return None
    return mean(values)


def unit_score(rows: list[dict], name: str) -> tuple[float | None, int]:
    """The score of a task, a variant or a ``task/variant`` cell as a mean of its cells' accuracies, and the
    number of answers it rests on; (None, 0) when no row carries the name."""
    if "/" in name:
        task, variant = (_fold(part) for part in name.split("/", 1))
        chosen = [
            row for row in rows if _fold(row.get("task")) == task and _fold(row.get("variant")) == variant
        ]
    else:
        chosen = [row for row in rows if _fold(row.get("task")) == _fold(name)] or [
            row for row in rows if _fold(row.get("variant")) == _fold(name)
        ]
    if not chosen:
        return None, 0
    by_cell = grouped(chosen, ["task", "variant"])
    return mean(accuracy(members)["accuracy"] for members in by_cell.values()), len(chosen)


def unit_scores(rows: list[dict], keys: list[str]) -> list[dict]:
    """CausalityCheck's Table 1 per ``keys``: "All", each task and each variant, every score a mean of cell
    accuracies ("each score is the average score of related units"), with the chance of each as the same mean
    of the cells' chance baselines."""
    result = []
    for values, members in grouped(
        [row for row in rows if row.get("task") or row.get("variant")], keys
    ).items():
        by_cell = grouped(members, ["task", "variant"])
        cell_figures = {cell: accuracy(answers) for cell, answers in by_cell.items()}
        line = {
            **dict(zip(keys, values)),
            "cells": len(cell_figures),
            "answers": len(members),
            "All": mean(figure["accuracy"] for figure in cell_figures.values()),
            "All_chance": mean(figure["chance"] for figure in cell_figures.values()),
        }
        for position, kind in ((0, "task"), (1, "variant")):
            for name in sorted({cell[position] for cell in cell_figures if cell[position]}, key=str):
                mine = [figure for cell, figure in cell_figures.items() if cell[position] == name]
                line[f"{kind}:{name}"] = mean(figure["accuracy"] for figure in mine)
                line[f"{kind}:{name}:chance"] = mean(figure["chance"] for figure in mine)
        result.append(line)
    return result


BOOTSTRAP_RESAMPLES = 1000
BOOTSTRAP_SEED = 13


def mean_interval(
    values: list[float],
    *,
    level: float = 0.95,
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
) -> tuple[float, float] | None:
    """The percentile bootstrap interval of the mean of ``values`` (seeded: a report reads the same each time).

    None for fewer than two values, where resampling says nothing."""
    import numpy as np

    data = np.asarray([float(v) for v in values if v is not None])
    if data.size < 2:
        return None
    generator = np.random.default_rng(seed)
    means = np.empty(resamples)
    # Resampled in blocks so a large run never holds resamples × answers indices at once.
    block = max(1, 2_000_000 // data.size)
    for start in range(0, resamples, block):
        stop = min(resamples, start + block)
        picks = generator.integers(0, data.size, size=(stop - start, data.size))
        means[start:stop] = data[picks].mean(axis=1)
    tail = (1 - level) / 2 * 100
    low, high = np.percentile(means, [tail, 100 - tail])
    return float(low), float(high)


def intervals_by(rows: list[dict], keys: list[str], value) -> dict[tuple, tuple[float, float] | None]:
    """The bootstrap interval of the mean of ``value(row)`` for each combination of ``keys``."""
    return {
        group: mean_interval([value(row) for row in members])
        for group, members in grouped(rows, keys).items()
    }
