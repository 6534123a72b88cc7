"""Cohen's kappa per cell of two item-metadata fields, laid out as a table (CausalityCheck's Table 3:
variants as rows, tasks as columns), with the cells below a threshold flagged."""

from collections import defaultdict
from dataclasses import dataclass, field

from annotation.designs import design_for
from annotation.models import Judgment, Project

from ..agreement import KAPPA_WEIGHTS, Bootstrap, Estimate, cohen_kappa
from .agreement import Criterion, agreement_criteria, criterion_table

DEFAULT_THRESHOLD = 0.8


@dataclass
class KappaCell:
    row: str
    column: str
    kappa: Estimate | None
    n_items: int
    n_judgments: int
    flagged: bool


@dataclass
class KappaGrid:
    criterion: Criterion
    threshold: float
    rows: list[tuple[str, str]]  # (metadata value, label)
    columns: list[tuple[str, str]]
    cells: dict[tuple[str, str], KappaCell] = field(default_factory=dict)

    def table(self) -> list[tuple[str, list[KappaCell | None]]]:
        """Row label and the row's cells in column order (None: no item in that cell)."""
        return [
            (label, [self.cells.get((row, column)) for column, _label in self.columns])
            for row, label in self.rows
        ]

    @property
    def flagged(self) -> list[KappaCell]:
        return [cell for cell in self.cells.values() if cell.flagged]

    def as_dict(self) -> dict:
        return {
            "criterion": self.criterion.key,
            "threshold": self.threshold,
            "rows": [value for value, _label in self.rows],
            "columns": [value for value, _label in self.columns],
            "cells": [
                {
                    "row": cell.row,
                    "column": cell.column,
                    "kappa": None if cell.kappa is None else cell.kappa.as_dict(),
                    "n_items": cell.n_items,
                    "n_judgments": cell.n_judgments,
                    "flagged": cell.flagged,
                }
                for cell in self.cells.values()
            ],
        }


def cell_kappa_grid(
    project: Project,
    *,
    rows: str,
    columns: str,
    criterion: str = "causal_class",
    threshold: float = DEFAULT_THRESHOLD,
    round: int | None = None,
    bootstrap: Bootstrap | None = None,
) -> KappaGrid:
    """Mean pairwise Cohen's kappa of ``criterion`` for the items of each (``rows``, ``columns``) pair of
    metadata values. A cell is flagged when its kappa is below ``threshold`` or cannot be computed."""
    criteria = {spec.key: spec for spec in agreement_criteria(project)}
    if criterion not in criteria:
        raise ValueError(f"unknown criterion {criterion!r}; use one of {', '.join(criteria)}")
    spec = criteria[criterion]
    judgments = Judgment.objects.filter(item__project=project)
    if round is not None:
        judgments = judgments.filter(round=round)
    groups: dict[tuple[str, str], list] = defaultdict(list)
    for row in judgments.order_by().values_list(
        "item_id", "round", "annotator__username", "ratings", "vote", "causal_class", "item__metadata"
    ):
        metadata = row[-1] if isinstance(row[-1], dict) else {}
        key = (str(metadata.get(rows, "")), str(metadata.get(columns, "")))
        if all(key):
            groups[key].append(row[:-1])
    grid = KappaGrid(
        criterion=spec,
        threshold=threshold,
        rows=_axis(project, rows, {k[0] for k in groups}),
        columns=_axis(project, columns, {k[1] for k in groups}),
    )
    weights = KAPPA_WEIGHTS[spec.level]
    for (row, column), judged in groups.items():
        kappa = cohen_kappa(criterion_table(judged, spec), weights=weights, bootstrap=bootstrap).mean
        grid.cells[(row, column)] = KappaCell(
            row=row,
            column=column,
            kappa=kappa,
            n_items=len({entry[0] for entry in judged}),
            n_judgments=len(judged),
            flagged=kappa.value is None or kappa.value < threshold,
        )
    return grid


def _axis(project: Project, name: str, seen: set[str]) -> list[tuple[str, str]]:
    """The values of one axis: in the design's order with its short codes when it declares them."""
    declared = getattr(design_for(project), "cell_axes", lambda: {})().get(name, [])
    ordered = [(value, code) for value, code, _label in declared if value in seen]
    known = {value for value, _code in ordered}
    return ordered + [(value, value) for value in sorted(seen - known)]
