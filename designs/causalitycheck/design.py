"""The CausalityCheck design (`../shared/papers/causalitycheck.txt`): a seed item and its 4 × 4 checklist.

A seed (four-option multiple choice) is expanded into tasks — original problem, answerable
judging, process judging, causal validity assessing — each in four variants — problem solving,
problem understanding, irrelevant disturbance, virtual causal reasoning: 36 items per seed
(``causalitycheck_seeds``). Every item is checked against its source and siblings
(``causalitycheck_checks``); agreement is Cohen's kappa per task × variant cell, and a release
exports one file per cell.
"""

import json
from pathlib import Path

from django.utils.translation import gettext_lazy as _

from annotation.designs.base import ExportFile, ProjectDesign, Stage, register
from annotation.models import Item

from .checks import checklist_warnings, snapshot
from .seeds import (
    LABEL_NAMES,
    LABELS,
    LETTERS,
    TASK_ROLES,
    TASKS,
    VARIANTS,
    VERDICTS,
    cell_code,
    cells,
    seed_create,
    seed_derive,
)

DATA = Path(__file__).resolve().parent / "data"  # the example dataset

KAPPA_THRESHOLD = 0.8  # the paper's line for consistent annotation (appendix D)
# Every task's file starts with the item and its four choices; then come the task's own fields.
_ITEM_FIELDS = ["id", "seed", "split", "context", "question", "choice_1", "choice_2", "choice_3", "choice_4"]
EXPORT_FIELDS = {
    "op": [*_ITEM_FIELDS, "answer"],
    "aj": [*_ITEM_FIELDS, "answerable"],
    "pj": [*_ITEM_FIELDS, "answer", "causal_chain", "correctness"],
    "cva": [*_ITEM_FIELDS, "answer", "conclusion", "verdict"],
}


@register
class CausalityCheckDesign(ProjectDesign):
    key = "causalitycheck"
    name = "CausalityCheck"
    paper = "causalitycheck.txt"
    summary = _(
        "A four-option seed item expanded into a 4 × 4 checklist of tasks and robustness variants, "
        "with invariant checks and Cohen's kappa per cell."
    )
    answer_format = "multiple_choice"
    run_field_groups = ("cells",)
    example_file = "causalitycheck.json"
    published_examples = (
        "CausalProbe-H.json",
        "PS-OP_cleaned.json",
        "PS-AJ_cleaned.json",
        "PS-PJ_cleaned.json",
        "PS-DV_cleaned.json",
    )
    help_template = "designs/causalitycheck/_causalitycheck_help.html"
    item_partial = "designs/causalitycheck/_causalitycheck_item.html"

    def label_names(self) -> dict:
        return {**LABEL_NAMES, **VERDICTS}

    def judgment_labels(self, item) -> list[str]:
        """The labels of the item's own task (its gold label is one of them): the option letters for the original
        problem, answerable / unanswerable, valid / invalid chain, or the four verdicts. An item outside the
        checklist (no task) is offered the project's labels."""
        task = (item.metadata or {}).get("task")
        if task not in TASK_ROLES:
            return list(item.project.label_set)
        if task == "op":
            return list(LETTERS)
        return list(dict.fromkeys(TASK_ROLES[task].values()))

    def quality_questions(self, project) -> list[dict]:
        """The class is one question per task, each with its own labels (the option letters, answerable /
        unanswerable, valid / invalid chain, the four verdicts): one model over all of them would propose a
        verdict for an answerable item and mix an annotator's competence across tasks. Items outside the
        checklist keep the project's class question."""
        questions = super().quality_questions(project)
        index = next(n for n, question in enumerate(questions) if question["source"] == "causal_class")
        per_task = [
            {
                "key": f"causal_class:{task}",
                "source": "causal_class",
                "task": task,
                "name": _("Causal class: %(task)s") % {"task": TASKS[task][1]},
            }
            for task in TASK_ROLES
        ]
        return [*questions[:index], *per_task, *questions[index:]]

    def quality_question_applies(self, question: dict, metadata: dict) -> bool:
        if question["source"] != "causal_class":
            return True
        task = (metadata or {}).get("task")
        return question.get("task") == (task if task in TASK_ROLES else None)

    def judged_fields(self, item) -> set[str]:
        """The gold label (the class), and what gives it away: the variant's role (answerable, correct or corrupted
        chain, the verdict) and, for the original problem, which option is the correct one: the options' roles
        and the reference answer (the correct option's text)."""
        fields = super().judged_fields(item) | {"metadata.role"}
        if (item.metadata or {}).get("task") == "op":
            fields |= {"options.role", "reference_answer"}
        return fields

    def stages(self) -> list[Stage]:
        return [
            Stage("seeds", _("Seeds"), _("Four-option multiple-choice items with their context.")),
            Stage(
                "tasks",
                _("Task expansion"),
                _(
                    "A model writes an unanswerable context, a correct and a corrupted "
                    "causal chain, and one conclusion per verdict."
                ),
            ),
            Stage(
                "variants",
                _("Robustness variants"),
                _(
                    "A paraphrased context, an inserted distractor sentence, "
                    "and an invented name for a real entity."
                ),
            ),
            Stage(
                "derive",
                _("Checklist"),
                _("36 items per seed, each linked to its seed and siblings and checked for invariants."),
            ),
            Stage(
                "review",
                _("Manual inspection"),
                _("Two annotators inspect every item; Cohen's kappa per cell, cells below 0.8 flagged."),
            ),
            Stage(
                "release",
                _("Release"),
                _("Optionally subsampled per cell; one file per task × variant cell."),
            ),
        ]

    def project_defaults(self) -> dict:
        return {
            "answer_format": self.answer_format,
            "label_set": list(LABELS),
            "criteria": [
                {"key": "validity", "label": "Valid for its task and variant", "min": 1, "max": 5},
                {"key": "fluency", "label": "Fluency and correctness", "min": 1, "max": 5},
            ],
            "overlap": 2,
            "design_settings": {"double_prompt": True, "kappa_threshold": KAPPA_THRESHOLD},
        }

    def published_read(self, *, project, data, filename, batch=None):
        """The authors' seeds (``CausalProbe-H.json``: id, context, question, choice_1 … choice_4, answer) and
        each of their 16 test cells (``<VARIANT>-<TASK>_cleaned.json``), as published (``published``, ``cells``)."""
        from annotation.importing.errors import ImportFileError
        from annotation.importing.published import PublishedReport
        from annotation.importing.tables import open_table

        from .cells import is_published_cell, published_cell_import
        from .published import is_published_seeds, published_seeds_import

        try:
            columns = open_table(data, filename).columns
        except ImportFileError:
            return None  # the common import says what is wrong with the file
        if is_published_cell(columns, filename):
            return published_cell_import(project=project, data=data, filename=filename)
        if not is_published_seeds(columns):
            return None
        report = PublishedReport(group_word="seeds")
        seeds, derived = published_seeds_import(project=project, data=data, filename=filename, report=report)
        report.headline = f"{len(seeds)} seeds added, {derived} checklist items derived"
        return report

    def published_import(self, *, project, data, filename):
        report = self.published_read(project=project, data=data, filename=filename)
        return None if report is None else report.summary()

    def published_results(self, *, records, files):
        """The authors' per-cell result files (``result/<MODEL>/<VARIANT>-<TASK>res-<model>.json``)."""
        from .cells import published_results_read

        return published_results_read(records=records, files=files)

    def load_example(self, project, users: dict, demo: bool = False) -> dict:
        data = json.loads((DATA / self.example_file).read_text(encoding="utf-8"))
        items = []
        for number, spec in enumerate(data["seeds"], start=1):
            group = seed_create(project=project, spec=spec, where=f"{self.example_file}, seed {number}")
            items += seed_derive(group=group)
        counts = {"seeds": len(data["seeds"]), "items": len(items)}
        inspectors = [users[name] for name in ("annotator1", "annotator2") if name in users]
        if len(inspectors) == 2:
            counts["judgments"] = demo_inspection(project, self._inspected(items, data, demo), inspectors)
        return counts

    def demo_example(self, project, users: dict) -> dict:
        """The example with its last seed's items left uninspected: they wait for the demo's annotators."""
        return self.load_example(project, users, demo=True)

    @staticmethod
    def _inspected(items, data, demo: bool):
        per_seed = len(items) // max(len(data["seeds"]), 1)
        return items[: len(items) - per_seed] if demo and len(data["seeds"]) > 1 else items

    def item_warnings(self, item) -> list[str]:
        meta = item.metadata or {}
        if meta.get("design") != self.key or not meta.get("sibling_key"):
            return []
        related = Item.objects.filter(project_id=item.project_id).prefetch_related("options")
        siblings = [
            snapshot(other, list(other.options.all()))
            for other in related.filter(metadata__sibling_key=meta["sibling_key"]).exclude(pk=item.pk)
        ]
        source = None
        if meta.get("source"):
            found = related.filter(external_id=meta["source"]).first()
            source = snapshot(found, list(found.options.all())) if found else None
        this = snapshot(item)
        return checklist_warnings(this, source=source, siblings=[this, *siblings])

    def agreement_fields(self) -> list[str]:
        return ["task", "variant"]

    def unit_order(self) -> dict[str, list[str]]:
        """Table 1's columns: OP, AJ, PJ, CVA, then PS, PU, ID, VCR."""
        return {"task": list(TASKS), "variant": list(VARIANTS)}

    def benchmark_question(self, record, language):
        """Answerable judging, process judging and causal validity assessing each asked as its own question
        (``designs.causalitycheck.questions``); the original problem as the seed's."""
        from .questions import task_question

        return task_question(record, language)

    def export_files(self, release) -> list[ExportFile]:
        by_cell: dict[str, list[dict]] = {cell_code(task, variant): [] for task, variant in cells()}
        tasks = {}
        for task, variant in cells():
            tasks[cell_code(task, variant)] = task
        for split, data in (
            release.items.order_by("split", "position").values_list("split", "data").iterator()
        ):
            record = data if isinstance(data, dict) else json.loads(data)
            meta = json.loads(record.get("metadata") or "{}")
            cell = meta.get("cell")
            if cell in by_cell:
                by_cell[cell].append(export_row(record, meta, split))
        return [
            ExportFile(
                path=f"causalitycheck/{cell}.jsonl", rows=iter(rows), fields=EXPORT_FIELDS[tasks[cell]]
            )
            for cell, rows in by_cell.items()
            if rows
        ]

    # For the kappa table and the item partial: codes and names of the two axes.
    def cell_axes(self) -> dict:
        return {
            "task": [(key, code, label) for key, (code, label) in TASKS.items()],
            "variant": [(key, code, label) for key, (code, label) in VARIANTS.items()],
        }


def export_row(record: dict, meta: dict, split: str) -> dict:
    """One released item in the paper's field names (appendix J): choices numbered 1–4, answers 1-based."""
    options = [option["text"] for option in record.get("options") or []]
    correct = record.get("correct_option") or ""
    row = {
        "id": record["id"],
        "seed": meta.get("seed", ""),
        "split": split,
        "context": record["context"],
        "question": record["question"],
    }
    for number in range(4):
        row[f"choice_{number + 1}"] = options[number] if number < len(options) else ""
    answer = LETTERS.index(correct) + 1 if correct in LETTERS else None
    task, label = meta.get("task"), record.get("causal_class")
    if task == "aj":
        row["answerable"] = 1 if label == "answerable" else 0
    else:
        row["answer"] = answer
    if task == "pj":
        row["causal_chain"] = record["answer"]
        row["correctness"] = 1 if label == "valid_chain" else 0
    elif task == "cva":
        row["conclusion"] = record["answer"]
        row["verdict"] = label
    return row


def demo_inspection(project, items: list, inspectors: list) -> int:
    """The demo's round of inspection: two annotators label every item; the second confuses neighbouring
    verdicts on the first seed's conclusions, so causal validity assessing shows the lowest kappa, as in the paper."""
    from annotation.models import Assignment, Judgment
    from annotation.queue import items_recount_rounds

    confused = {
        "correct_and_reliable": "correct_but_prone_to_error",
        "incorrect_but_prone_to_correctness": "incorrect_and_unreliable",
    }
    judgments = 0
    for item in items:
        for annotator in inspectors:
            label = item.causal_class
            if annotator == inspectors[1] and label in confused and item.group_id == items[0].group_id:
                label = confused[label]
            assignment = Assignment.objects.create(
                item=item, annotator=annotator, round=1, status=Assignment.Status.SUBMITTED
            )
            Judgment.objects.create(
                item=item,
                annotator=annotator,
                assignment=assignment,
                round=1,
                ratings={"validity": 5 if label == item.causal_class else 3, "fluency": 5},
                vote=Judgment.Vote.ACCEPT,
                causal_class=label,
            )
            judgments += 1
    items_recount_rounds(items=Item.objects.filter(project=project, pk__in=[item.pk for item in items]))
    return judgments
