"""The report of one run, or of several side by side: tables with the numbers, and the plots drawn from them.

Open answers: BERTScore per class × model × condition (Causal_QA.PT Figure 3), judge scores per
class × model × condition (Figure 5), judge scores of human- vs model-written reference answers
(Figure 4), the ranking distribution per source (Figure 6), position bias of the ranking, and the
agreement of the judge with the annotators' majority. Closed formats: accuracy with chance, per
level and per type, group accuracy, errors by distractor role, task × variant cells and the
curator's differences between them. Each table downloads as CSV; the API returns the same rows.
"""

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from statistics import mean, median

from django.utils.safestring import SafeString
from django.utils.translation import gettext as _

from annotation.designs import design_for
from annotation.models import Judgment
from core.spreadsheet import csv_lines

from .. import plots
from ..agreement.statistics import krippendorff_alpha
from ..agreement.table import RatingTable
from ..models import EvalResponse, EvalRun, JudgeScore, Ranking
from . import metrics, reading
from .conditions import CLOSED, OPEN, option_role, question_of, record_metadata

SCALE = [1, 2, 3, 4, 5]


@dataclass
class Table:
    key: str
    title: str
    columns: list[tuple[str, str]]  # (key in each row, heading)
    rows: list[dict]
    plot: SafeString | None = None
    note: str = ""
    cells: list[list] = field(default_factory=list)

    def __post_init__(self):
        self.cells = [[row.get(key) for key, _label in self.columns] for row in self.rows]

    def csv(self) -> str:
        return "".join(csv_lines([key for key, _label in self.columns], self.cells))

    def as_dict(self) -> dict:
        return {
            "key": self.key,
            "title": self.title,
            "columns": [key for key, _label in self.columns],
            "rows": [{key: row.get(key) for key, _label in self.columns} for row in self.rows],
            "note": self.note,
        }


@dataclass
class Loaded:
    """What the tables are made of, read once: one dict per response, score and ranking."""

    runs: list[EvalRun]
    responses: list[dict]
    scores: list[dict]
    rankings: list[dict]
    keys: dict


def report_tables(
    runs: list[EvalRun], *, metadata_keys: dict | None = None, differences: str | None = None
) -> list[Table]:
    """Every table that has rows, for one run or several (then the run is part of each series' name)."""
    keys = {**runs[0].metadata_keys, **(metadata_keys or {})} if runs else {}
    loaded = _load(runs, keys)
    formats = {run.answer_format for run in runs}
    tables: list[Table] = []
    if OPEN in formats:
        tables += _open_tables(loaded)
    if formats & set(CLOSED):
        text = (
            differences
            if differences is not None
            else "\n".join(run.differences for run in runs if run.differences)
        )
        tables += _closed_tables(loaded, text)
    return [table for table in tables if table.rows]


def _series_name(run: EvalRun, model: str, condition: str, several: bool) -> str:
    """ "model · condition", the run first when several are compared; the model is left out when there is one."""
    name = f"{model} · {condition}" if model else condition
    return f"#{run.pk} {name}" if several else name


def _load(runs: list[EvalRun], keys: dict) -> Loaded:
    several = len(runs) > 1
    by_run = {run.pk: run for run in runs}
    one_model = (
        len({endpoint_id for run in runs for endpoint_id in run.endpoints.values_list("pk", flat=True)}) == 1
    )
    responses, by_response = [], {}
    rows = (
        EvalResponse.objects.filter(run__in=runs)
        .select_related("release_item", "endpoint")
        .order_by("run_id", "release_item__position", "endpoint_id", "condition", "repetition")
    )
    for response in rows:
        record = response.release_item.data
        meta = record_metadata(record)
        run = by_run[response.run_id]
        # The question as it was asked: a design's own (a CausalityCheck task: two options, or four verdicts) sets
        # the chance, and its options are not distractors with roles.
        asked = question_of(record, design_for(run.project), run.project.language)
        row = {
            "run": response.run_id,
            "model": response.endpoint.name,
            "condition": response.condition,
            "series": _series_name(
                run, "" if one_model else response.endpoint.name, response.condition, several
            ),
            "repetition": response.repetition,
            "item": record["id"],
            "release_item": response.release_item_id,
            "class": record.get("causal_class", ""),
            "group": record.get("group", ""),
            "level": str(meta.get(keys.get("level"), "") or record.get("causal_class", "")),
            "type": str(meta.get(keys.get("type"), "") or ""),
            "task": str(meta.get(keys.get("task"), "") or ""),
            "variant": str(meta.get(keys.get("variant"), "") or ""),
            "failed": bool(response.error),
            "unparsed": response.unparsed,
            "correct": bool(response.correct),
            "role": option_role(record, response.choice)
            if response.choice and not response.correct and not asked["own"]
            else "",
            "n_options": len(asked["options"]) or 2,
            "f1": response.bertscore_f1,
            "answer_by": record.get("answer_by", ""),
        }
        responses.append(row)
        by_response[response.pk] = row
    scores = []
    for score in JudgeScore.objects.filter(run__in=runs).select_related("release_item").order_by("pk"):
        record = score.release_item.data
        source = by_response.get(score.response_id)
        run = by_run[score.run_id]
        scores.append(
            {
                "run": score.run_id,
                "release_item": score.release_item_id,
                "item": record["id"],
                "class": record.get("causal_class", ""),
                "scores": score.scores,
                "failed": bool(score.error),
                "series": source["series"]
                if source
                else (f"#{run.pk} {_('reference')}" if several else _("reference")),
                "reference": source is None,
                "answer_by": record.get("answer_by", "") or "none",
                "round": record.get("review_rounds"),
                "item_id": score.release_item.item_id,
                # several judges, or the reference scored within each model's evaluation: one unit each
                "unit": (score.run_id, score.release_item_id, score.under_id, score.judge),
            }
        )
    rankings = []
    for ranking in Ranking.objects.filter(run__in=runs).select_related("endpoint").order_by("pk"):
        rankings.append(
            {
                "run": ranking.run_id,
                "model": (f"#{ranking.run_id} " if several else "") + ranking.endpoint.name,
                "shown": ranking.shown,
                "ranking": ranking.ranking,
                "failed": bool(ranking.error),
            }
        )
    return Loaded(runs, responses, scores, rankings, keys)


# --- open answers -------------------------------------------------------------------------------------


def _open_tables(loaded: Loaded) -> list[Table]:
    answered = [row for row in loaded.responses if not row["failed"]]
    tables = [_bertscore_table(answered, loaded.runs), _judge_table(loaded), _reference_table(loaded)]
    tables += _ranking_tables(loaded)
    tables.append(_judge_vs_people(loaded))
    tables.append(_failures_table(loaded))
    return tables


def _classes(rows: list[dict]) -> list[str]:
    return sorted({row["class"] for row in rows})


def _bertscore_note(runs: list[EvalRun]) -> str:
    """How each run computed BERTScore: model, layer, idf, and how many texts were read in windows."""
    notes = []
    for run in runs:
        used = run.bertscore_used or {}
        if not used:
            continue
        note = _(
            "Model %(model)s, layer %(layer)s of %(layers)s, %(idf)s; %(windowed)s texts longer than "
            "%(window)s tokens read in overlapping windows (none cut)."
        ) % {
            **used,
            "windowed": used.get("windowed", 0),
            "idf": _("idf weighting over the references") if used.get("idf") else _("no idf weighting"),
        }
        notes.append(f"#{run.pk}: {note}" if len(runs) > 1 else note)
    return " ".join(notes)


def _bertscore_table(rows: list[dict], runs: list[EvalRun]) -> Table:
    scored = [row for row in rows if row["f1"] is not None]
    lines = []
    for (causal_class, series), members in metrics.grouped(scored, ["class", "series"]).items():
        lines.append(
            {
                "class": causal_class,
                "series": series,
                "n": len(members),
                "bertscore_f1": mean(row["f1"] for row in members),
            }
        )
    series = sorted({row["series"] for row in scored})
    plot = plots.grouped_bars(
        [
            (
                c,
                [
                    (
                        s,
                        next(
                            (
                                line["bertscore_f1"]
                                for line in lines
                                if line["class"] == c and line["series"] == s
                            ),
                            None,
                        ),
                    )
                    for s in series
                ],
            )
            for c in _classes(scored)
        ],
        title=_("Mean BERTScore F1 per class, model and condition (95% bootstrap intervals)"),
        series=series,
        max_value=1.0,
        digits=3,
        intervals=metrics.intervals_by(scored, ["class", "series"], lambda row: row["f1"]),
        shown=reading.reader_text(runs[0].project) if runs else None,
    )
    return Table(
        "bertscore",
        _("BERTScore F1 against the reference answer"),
        [
            ("class", _("Class")),
            ("series", _("Model · condition")),
            ("n", _("Answers")),
            ("bertscore_f1", _("Mean F1")),
        ],
        lines,
        plot if lines else None,
        note=_bertscore_note(runs),
    )


def _criteria(scores: list[dict]) -> list[str]:
    seen = []
    for score in scores:
        for key in score["scores"]:
            if key not in seen:
                seen.append(key)
    return seen


def _judge_table(loaded: Loaded) -> Table:
    scored = [score for score in loaded.scores if not score["failed"]]
    criteria = _criteria(scored)
    lines = []
    for (causal_class, series), members in metrics.grouped(scored, ["class", "series"]).items():
        line = {"class": causal_class, "series": series, "n": len(members)}
        for criterion in criteria:  # a judge may have scored some criteria only (several judges, imported)
            given = [score["scores"][criterion] for score in members if criterion in score["scores"]]
            line[criterion] = mean(given) if given else None
        present = [line[criterion] for criterion in criteria if line[criterion] is not None]
        line["mean"] = mean(present) if present else None
        lines.append(line)
    series = sorted({line["series"] for line in lines})
    plot = plots.grouped_bars(
        [
            (
                c,
                [
                    (
                        s,
                        next(
                            (line["mean"] for line in lines if line["class"] == c and line["series"] == s),
                            None,
                        ),
                    )
                    for s in series
                ],
            )
            for c in _classes(scored)
        ],
        title=_("Mean judge score (1–5) per class, model and condition (95% bootstrap intervals)"),
        series=series,
        max_value=5.0,
        intervals=metrics.intervals_by(
            scored,
            ["class", "series"],
            lambda score: mean(score["scores"].values()) if score["scores"] else None,
        ),
        shown=reading.reader_text(loaded.runs[0].project) if loaded.runs else None,
    )
    return Table(
        "judge_scores",
        _("Judge scores (1–5), means per criterion"),
        [("class", _("Class")), ("series", _("Model · condition")), ("n", _("Answers"))]
        + [(criterion, criterion) for criterion in criteria]
        + [("mean", _("Mean"))],
        lines,
        plot if lines else None,
    )


def _reference_table(loaded: Loaded) -> Table:
    """How the judge scored reference answers written by people and by models (Figure 4)."""
    references = [score for score in loaded.scores if score["reference"] and not score["failed"]]
    criteria = _criteria(references)
    lines, bars = [], []
    for author in sorted({score["answer_by"] for score in references}):
        members = [score for score in references if score["answer_by"] == author]
        for criterion in criteria:
            given = [score["scores"][criterion] for score in members if criterion in score["scores"]]
            if not given:
                continue
            counts = Counter(given)
            line = {
                "answer_by": author,
                "criterion": criterion,
                "n": len(given),
                "mean": mean(given),
            }
            line.update({f"score_{value}": counts.get(value, 0) for value in SCALE})
            lines.append(line)
            project = loaded.runs[0].project
            bars.append(
                (
                    f"{reading.author_name(author)} · {reading.criterion_name(project, criterion)}",
                    [(str(value), counts.get(value, 0)) for value in SCALE],
                )
            )
    plot = (
        plots.bar_chart(
            bars,
            title=_("Judge scores of reference answers, human- vs model-written"),
            series=[str(value) for value in SCALE],
        )
        if bars
        else None
    )
    return Table(
        "reference_scores",
        _("Judge scores of the reference answers by who wrote them"),
        [
            ("answer_by", _("Written by")),
            ("criterion", _("Criterion")),
            ("n", _("Answers")),
            ("mean", _("Mean")),
        ]
        + [(f"score_{value}", str(value)) for value in SCALE],
        lines,
        plot,
    )


def _ranking_tables(loaded: Loaded) -> list[Table]:
    ranked = [ranking for ranking in loaded.rankings if not ranking["failed"] and ranking["ranking"]]
    places = max((len(ranking["ranking"]) for ranking in ranked), default=0)
    lines, bars = [], []
    by_model_source: dict[tuple, Counter] = defaultdict(Counter)
    for ranking in ranked:
        for place, source in enumerate(ranking["ranking"], start=1):
            by_model_source[(ranking["model"], source)][place] += 1
    for (model, source), counts in sorted(by_model_source.items()):
        total = sum(counts.values())
        line = {"model": model, "source": source, "n": total}
        for place in range(1, places + 1):
            line[f"place_{place}"] = counts.get(place, 0)
            line[f"place_{place}_share"] = counts.get(place, 0) / total if total else None
        lines.append(line)
        bars.append(
            (
                f"{model} · {reading.condition_name(source)}",
                [(str(place), counts.get(place, 0)) for place in range(1, places + 1)],
            )
        )
    distribution = Table(
        "rankings",
        _("Ranking of the reference and the answers: how often each source took each place"),
        [("model", _("Model")), ("source", _("Source")), ("n", _("Rankings"))]
        + [(f"place_{p}", _("place %(n)s") % {"n": p}) for p in range(1, places + 1)]
        + [(f"place_{p}_share", _("share at place %(n)s") % {"n": p}) for p in range(1, places + 1)],
        lines,
        plots.bar_chart(
            bars, title=_("Places per source (1 = best)"), series=[str(p) for p in range(1, places + 1)]
        )
        if bars
        else None,
    )
    bias_lines = []
    shown = [
        ranking for ranking in ranked if ranking["shown"]
    ]  # imported rankings may not say the order shown
    for model in sorted({ranking["model"] for ranking in shown}):
        members = [ranking for ranking in shown if ranking["model"] == model]
        won = Counter(ranking["shown"].index(ranking["ranking"][0]) + 1 for ranking in members)
        for position in range(1, places + 1):
            bias_lines.append(
                {
                    "model": model,
                    "position": position,
                    "won": won.get(position, 0),
                    "n": len(members),
                    "share": won.get(position, 0) / len(members),
                    "expected": 1 / places,
                }
            )
    bias = Table(
        "position_bias",
        _("Position bias: how often the answer shown at each position was ranked best"),
        [
            ("model", _("Model")),
            ("position", _("Shown at")),
            ("won", _("Ranked best")),
            ("n", _("Rankings")),
            ("share", _("Share")),
            ("expected", _("Without bias")),
        ],
        bias_lines,
    )
    return [distribution, bias]


def _majority(values: list[int]) -> int:
    counts = Counter(values).most_common()
    tied = [value for value, n in counts if n == counts[0][1]]
    return tied[0] if len(tied) == 1 else int(median(sorted(values)))


def _judge_vs_people(loaded: Loaded) -> Table:
    """Per criterion: Krippendorff's alpha (ordinal) between the judge's score of each reference answer and the
    annotators' majority rating of the same item in its last review round."""
    references = [
        score for score in loaded.scores if score["reference"] and not score["failed"] and score["item_id"]
    ]
    if not references:
        return Table("judge_vs_people", "", [], [])
    judgments = Judgment.objects.filter(item_id__in={score["item_id"] for score in references}).values_list(
        "item_id", "round", "ratings"
    )
    ratings: dict[tuple, list] = defaultdict(list)
    for item_id, round_number, given in judgments:
        for criterion, value in (given or {}).items():
            if isinstance(value, int) and value in SCALE:
                ratings[(item_id, round_number, criterion)].append(value)
    lines = []
    for criterion in _criteria(references):
        rows, judge_values, human_values = [], [], []
        for score in references:
            human = ratings.get((score["item_id"], score["round"], criterion))
            if not human or criterion not in score["scores"]:
                continue
            unit = score["unit"]
            majority = _majority(human)
            rows += [(unit, "judge", score["scores"][criterion]), (unit, "people", majority)]
            judge_values.append(score["scores"][criterion])
            human_values.append(majority)
        if not rows:
            continue
        estimate = krippendorff_alpha(RatingTable.from_rows(rows, categories=SCALE), level="ordinal")
        lines.append(
            {
                "criterion": criterion,
                "items": len(judge_values),
                "alpha": estimate.value,
                "reading": estimate.reading,
                "note": estimate.note,
                "judge_mean": mean(judge_values),
                "people_mean": mean(human_values),
                "exact": sum(a == b for a, b in zip(judge_values, human_values)) / len(judge_values),
            }
        )
    return Table(
        "judge_vs_people",
        _("The judge against the annotators' majority (reference answers)"),
        [
            ("criterion", _("Criterion")),
            ("items", _("Items")),
            ("alpha", _("Krippendorff's α (ordinal)")),
            ("reading", _("Reading")),
            ("judge_mean", _("Judge mean")),
            ("people_mean", _("People's mean")),
            ("exact", _("Same score")),
            ("note", _("Note")),
        ],
        lines,
        note=_(
            "Only items that annotators rated on the same criteria, in the review round that was released."
        ),
    )


def _failures_table(loaded: Loaded) -> Table:
    lines = []
    for what, rows in (
        (_("answers"), loaded.responses),
        (_("judge scores"), loaded.scores),
        (_("rankings"), loaded.rankings),
    ):
        failed = sum(1 for row in rows if row["failed"])
        if rows:
            lines.append({"what": what, "n": len(rows), "failed": failed})
    return Table(
        "failures",
        _("Calls that failed for good (after retries and re-asking)"),
        [("what", _("What")), ("n", _("Rows")), ("failed", _("Failed"))],
        lines if any(line["failed"] for line in lines) else [],
    )


# --- closed formats -----------------------------------------------------------------------------------


def _right(row: dict) -> float:
    return 1.0 if row["correct"] else 0.0


def _accuracy_columns() -> list[tuple[str, str]]:
    return [
        ("n", _("Answers")),
        ("correct", _("Right")),
        ("accuracy", _("Accuracy")),
        ("unparsed", _("Unreadable")),
        ("failed", _("Failed calls")),
        ("chance", _("Chance")),
    ]


def _closed_tables(loaded: Loaded, differences_text: str) -> list[Table]:
    rows = loaded.responses
    keys = ["series"]
    shown = reading.reader_text(loaded.runs[0].project) if loaded.runs else None
    overall = metrics.accuracy_by(rows, keys)
    series = [line["series"] for line in overall]
    tables = [
        Table(
            "accuracy",
            _("Accuracy"),
            [("series", _("Model · condition"))] + _accuracy_columns(),
            overall,
            plots.grouped_bars(
                [(_("all questions"), [(line["series"], line["accuracy"]) for line in overall])],
                title=_("Accuracy (95% bootstrap intervals)"),
                series=series,
                max_value=1.0,
                digits=3,
                intervals={
                    (_("all questions"), series_name): interval
                    for (series_name,), interval in metrics.intervals_by(rows, keys, _right).items()
                },
                shown=shown,
            ),
        )
    ]
    by_level = metrics.accuracy_by(rows, ["level"] + keys)
    tables.append(
        Table(
            "accuracy_by_level",
            _("Accuracy per causal level (metadata key “%(key)s”, else the class)")
            % {"key": loaded.keys.get("level")},
            [("level", _("Level")), ("series", _("Model · condition"))] + _accuracy_columns(),
            by_level,
            plots.grouped_bars(
                _groups(by_level, "level", series, "accuracy"),
                title=_("Accuracy per level (95% bootstrap intervals)"),
                series=series,
                max_value=1.0,
                digits=3,
                intervals=metrics.intervals_by(rows, ["level"] + keys, _right),
                shown=shown,
            ),
        )
    )
    typed = [row for row in rows if row["type"]]
    by_type = metrics.accuracy_by(typed, ["type"] + keys)
    tables.append(
        Table(
            "accuracy_by_type",
            _("Accuracy per question type (metadata key “%(key)s”)") % {"key": loaded.keys.get("type")},
            [("type", _("Type")), ("series", _("Model · condition"))] + _accuracy_columns(),
            by_type,
            plots.grouped_bars(
                _groups(by_type, "type", series, "accuracy"),
                title=_("Accuracy per type (95% bootstrap intervals)"),
                series=series,
                max_value=1.0,
                digits=3,
                intervals=metrics.intervals_by(typed, ["type"] + keys, _right),
                shown=shown,
            )
            if by_type
            else None,
        )
    )
    group_size = design_for(loaded.runs[0].project).group_size() if loaded.runs else None
    groups = metrics.group_accuracy(rows, keys, group_size=group_size)
    tables.append(
        Table(
            "group_accuracy",
            _("Group accuracy: whole groups whose every question is answered right"),
            [
                ("series", _("Model · condition")),
                ("groups", _("Groups")),
                ("groups_correct", _("All right")),
                ("group_accuracy", _("Group accuracy")),
                ("group_chance", _("Chance (group)")),
                ("group_size", _("Questions per group")),
                ("groups_left_out", _("Groups left out")),
                ("left_out_reason", _("Why left out")),
                ("questions", _("Questions")),
                ("question_accuracy", _("Accuracy per question")),
                ("question_chance", _("Chance (question)")),
            ],
            groups,
        )
    )
    if any(row["n_options"] > 2 for row in rows):
        errors = metrics.error_distribution(rows, keys)
        tables.append(
            Table(
                "errors",
                _("Wrong answers by the role of the option chosen"),
                [("series", _("Model · condition")), ("wrong", _("Wrong"))]
                + [(role, role) for role in metrics.ERROR_ROLES]
                + [(f"{role}_share", _("%(role)s share") % {"role": role}) for role in metrics.ERROR_ROLES]
                + [("unparsed", _("Unreadable")), ("failed", _("Failed calls"))],
                errors,
                plots.bar_chart(
                    [
                        (line["series"], [(role, line[role]) for role in metrics.ERROR_ROLES])
                        for line in errors
                    ],
                    title=_("Errors by distractor role"),
                    series=metrics.ERROR_ROLES,
                ),
            )
        )
    tables += _variant_tables(loaded, rows, keys, differences_text)
    return tables


def _unit_rank(name: str, order: dict) -> tuple:
    """Tasks before variants, each in the design's order (CausalityCheck: its Table 1's), others after by name."""
    kind, value = name.split(":", 1)
    values = order.get(kind, [])
    return (0 if kind == "task" else 1, values.index(value) if value in values else len(values), value)


def _groups(lines: list[dict], by: str, series: list[str], value: str) -> list:
    return [
        (
            label,
            [
                (s, next((line[value] for line in lines if line[by] == label and line["series"] == s), None))
                for s in series
            ],
        )
        for label in sorted({line[by] for line in lines})
    ]


def _variant_tables(loaded: Loaded, rows: list[dict], keys: list[str], differences_text: str) -> list[Table]:
    cells = metrics.cells(rows, keys)
    plot_parts = []
    for series in sorted({line["series"] for line in cells}):
        mine = [line for line in cells if line["series"] == series]
        tasks = sorted({line["task"] for line in mine})
        variants = sorted({line["variant"] for line in mine})
        plot_parts.append(
            plots.heatmap(
                tasks,
                variants,
                {(line["task"], line["variant"]): line["accuracy"] for line in mine},
                title=_("Accuracy per task × variant: %(series)s") % {"series": series},
                caption=series,
            )
        )
    tables = [
        Table(
            "cells",
            _("Accuracy per task × variant (metadata keys “%(task)s” and “%(variant)s”)")
            % {"task": loaded.keys.get("task"), "variant": loaded.keys.get("variant")},
            [("series", _("Model · condition")), ("task", _("Task")), ("variant", _("Variant"))]
            + _accuracy_columns(),
            cells,
            SafeString("".join(plot_parts)) if plot_parts else None,
        )
    ]
    scores = metrics.unit_scores(rows, keys)
    if scores:
        names = [key for key in scores[0] if key.count(":") == 1]
        for line in scores[1:]:
            names += [key for key in line if key.count(":") == 1 and key not in names]
        order = design_for(loaded.runs[0].project).unit_order() if loaded.runs else {}
        names.sort(key=lambda name: _unit_rank(name, order))
        tables.append(
            Table(
                "unit_scores",
                _(
                    "Scores as means of units (CausalityCheck Table 1): a task's score is the mean of its "
                    "cells' accuracies, a variant's the mean over its tasks, All the mean of every cell"
                ),
                [("series", _("Model · condition")), ("All", _("All")), ("All_chance", _("Chance (All)"))]
                + [(name, name.split(":", 1)[1].upper()) for name in names]
                + [("cells", _("Cells")), ("answers", _("Answers"))],
                scores,
            )
        )
    try:
        definitions = metrics.parse_differences(differences_text)
    except metrics.DifferenceError as exc:
        return tables + [
            Table(
                "differences", _("Differences between cells"), [("error", _("Error"))], [{"error": str(exc)}]
            )
        ]
    if definitions:
        values = metrics.difference_values(rows, definitions, keys)
        tables.append(
            Table(
                "differences",
                _("Differences between cells defined by the curator"),
                [
                    ("series", _("Model · condition")),
                    ("difference", _("Difference")),
                    ("definition", _("Definition")),
                    ("left", _("Left")),
                    ("right", _("Right")),
                    ("value", _("Value")),
                    ("terms", _("Each term: its score and the answers it rests on")),
                    ("missing", _("Not found")),
                ],
                values,
            )
        )
    return tables
