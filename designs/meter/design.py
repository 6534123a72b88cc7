"""The METER design (`../shared/papers/meter.txt`): one context, three causal levels, five options each.

The pipeline lives in ``pipeline`` (stages and their rules), the stem bank and letter shuffling in ``stems``,
the export with the paper's field names in ``export``. Generation jobs (de-contamination votes; question,
answer and distractors per level) are in ``generation.services.work``.
"""

import json

from django.utils.translation import gettext_lazy as _

from annotation.designs.base import ExportFile, ProjectDesign, Stage, register
from annotation.models import ItemGroup, Option

from . import export, pipeline
from .stems import DATA, LEVELS, letter_balance, stem_bank

FILTER_CRITERIA = [
    {"key": "level_alignment", "label": "Level alignment (1 pass, 0 fail)", "min": 0, "max": 1},
    {"key": "faithfulness", "label": "Faithfulness to the context (1 pass, 0 fail)", "min": 0, "max": 1},
    {"key": "fluency", "label": "Fluency (1 pass, 0 fail)", "min": 0, "max": 1},
    {"key": "accuracy", "label": "Accuracy of the correct option (1 pass, 0 fail)", "min": 0, "max": 1},
    {
        "key": "distractor_alignment",
        "label": "Distractors fit their categories (1 pass, 0 fail)",
        "min": 0,
        "max": 1,
    },
]
LEVEL_DEFINITIONS = {
    "pt-BR": {
        "L1": "L1 — descoberta causal: a pergunta pede a causa ou o efeito de um evento do contexto.",
        "L2": "L2 — intervenção: uma ação nova, no futuro, que não contradiz o contexto; o que ela provocará?",
        "L3": "L3 — contrafactual: uma mudança específica num evento passado (não uma simples negação); o que teria mudado?",
    },
    "en": {
        "L1": "L1 — causal discovery: the question asks for the cause or the effect of an event of the context.",
        "L2": "L2 — intervention: a new action, in the future tense, that does not contradict the context; what will it bring about?",
        "L3": "L3 — counterfactual: a specific change to a past event (not a mere negation); what would have been different?",
    },
}


@register
class MeterDesign(ProjectDesign):
    key = "meter"
    name = "METER"
    paper = "meter.txt"
    summary = _(
        "Entries of one context with three multiple-choice questions (causal discovery, intervention, "
        "counterfactual), five options each: the correct one and four typed distractors."
    )
    answer_format = "multiple_choice"
    run_field_groups = ("levels",)
    example_file = "meter.json"
    published_examples = ("dataset.jsonl",)
    help_template = "designs/meter/_meter_help.html"
    item_partial = "designs/meter/_meter_item.html"
    project_partial = "designs/meter/_meter_project.html"

    def stages(self) -> list[Stage]:
        return [
            Stage("pair", _("Cause–effect pair"), _("A context and a cause–effect pair from it.")),
            Stage(
                "decontamination",
                _("De-contamination"),
                _(
                    "Several models are asked, without the context, whether A causes B; every vote is kept. "
                    "The pair stays only if all say no."
                ),
            ),
            Stage(
                "verification",
                _("Pair verification"),
                _("Three annotators check the pair; any rejection discards it."),
            ),
            Stage(
                "generation",
                _("Generation"),
                _(
                    "A model writes the L1, L2 and L3 questions from the stem bank, the answers and four typed distractors."
                ),
            ),
            Stage(
                "editing",
                _("Editing"),
                _(
                    "Two editors edit each question, a third reviews; the majority vote decides the final version."
                ),
            ),
            Stage(
                "filtering",
                _("Filtering"),
                _(
                    "Three annotators check five pass/fail criteria; the majority keeps or discards the question."
                ),
            ),
            Stage("approval", _("Approval"), _("A curator approves kept questions into gold.")),
            Stage("gold", _("Gold entries"), _("Entries whose three questions are all approved.")),
            Stage("discarded", _("Discarded"), _("Entries that left the pipeline, with the reason.")),
        ]

    def project_defaults(self) -> dict:
        return {
            "answer_format": self.answer_format,
            "label_set": list(LEVELS),
            "criteria": [dict(criterion) for criterion in FILTER_CRITERIA],
            "overlap": 3,
            "design_settings": {"seed": pipeline.DEFAULT_SEED, "class_definitions": LEVEL_DEFINITIONS},
        }

    def published_read(self, *, project, data, filename, batch=None):
        """METER's ``dataset.jsonl`` as the authors publish it (``published``); the earlier layout too."""
        from annotation.importing.published import PublishedReport

        from .published import (
            is_published_meter,
            published_columns,
            published_dataset_import,
            published_entries_import,
        )

        if not is_published_meter(data, filename):
            return None  # other files (the example's pairs as rows, questions) go through the common import
        if published_columns(data, filename) is not None:
            return published_dataset_import(project=project, data=data, filename=filename)
        entries = published_entries_import(project=project, data=data)
        return PublishedReport(
            records=len(entries),
            groups=len(entries),
            items=3 * len(entries),
            headline=f"{len(entries)} entries added, three questions each",
        )

    def published_import(self, *, project, data, filename):
        report = self.published_read(project=project, data=data, filename=filename)
        return None if report is None else report.summary()

    def load_example(self, project, users: dict) -> dict:
        """The example entries as cause–effect pairs (the first stage); their hand-written questions stay in the
        file as what generation should produce (the fake model server replays them in the tests)."""
        data = json.loads((DATA / self.example_file).read_text(encoding="utf-8"))
        created = [
            pipeline.entry_create(
                project=project,
                external_id=spec["external_id"],
                context=spec["context"],
                cause=spec["cause"],
                effect=spec["effect"],
            )
            for spec in data["entries"]
        ]
        return {"entries": len(created)}

    def demo_example(self, project, users: dict) -> dict:
        """The example's pairs, and the published example's entries, whose three questions wait at the editing
        stage: the demo has questions for annotators (and, once judged, for the curator) before any model job."""
        from .published import published_entries_import

        counts = self.load_example(project, users)
        published = published_entries_import(
            project=project, data=(DATA / "meter_published.jsonl").read_bytes()
        )
        return {**counts, "published_entries": len(published)}

    def judgment_criteria(self, item) -> list[dict]:
        """Verification and editing are a vote on the pair or the final version; filtering rates five criteria."""
        if item.metadata.get("stage") == "filtering":
            return list(item.project.criteria)
        return []

    def judgment_labels(self, item) -> list[str]:
        return []  # the level of each question is fixed by its place in the entry

    def round_complete(self, item) -> None:
        pipeline.round_complete(item)

    def releasable(self, items):
        groups = ItemGroup.objects.filter(pk__in=items.values("group_id"))
        return items.filter(metadata__role=pipeline.QUESTION, group__in=pipeline.gold_entries(groups))

    def item_warnings(self, item) -> list[str]:
        if item.metadata.get("role") != pipeline.QUESTION:
            return []
        options = list(item.options.all())
        roles = sorted(option.role for option in options)
        warnings = []
        if roles != sorted(["correct", "contradictory", "unfounded", "reversal", "irrelevant"]):
            warnings.append(
                _(
                    "A METER question needs five options: the correct one and one of each distractor "
                    "category (it has: %(roles)s)."
                )
                % {"roles": ", ".join(roles) or "—"}
            )
        if any(not option.rationale.strip() for option in options if option.role != "correct"):
            warnings.append(_("Every distractor needs a rationale."))
        return warnings

    def agreement_fields(self) -> list[str]:
        return ["stage"]

    def stage_counts(self, project) -> dict[str, int]:
        return pipeline.stage_counts(project)

    def project_context(self, project) -> dict:
        positions = Option.objects.filter(
            item__project=project, item__metadata__role=pipeline.QUESTION, role=Option.Role.CORRECT
        ).values_list("position", flat=True)
        letters = [chr(ord("A") + position) for position in positions]
        discarded = pipeline.entries(project, pipeline.DISCARDED).values_list("external_id", "metadata")
        return {
            "letter_balance": letter_balance(letters),
            "discarded_entries": [
                (external_id, metadata.get("discarded_because", "")) for external_id, metadata in discarded
            ],
            "stem_bank": stem_bank(project.language),
        }

    def export_files(self, release) -> list[ExportFile]:
        records = {split: [] for split in export.SPLITS}
        for split, data in release.items.order_by("split", "position").values_list("split", "data"):
            records[split].append(data)
        entries = export.entries_by_split(records)
        files = [
            ExportFile(
                f"meter/{split}.jsonl",
                iter([export.model_row(entry) for entry in entries[split]]),
                export.ENTRY_FIELDS,
            )
            for split in export.SPLITS
        ]
        categories = [
            export.category_row(entry, split) for split in export.SPLITS for entry in entries[split]
        ]
        files.append(ExportFile("meter/categories.jsonl", iter(categories), export.CATEGORY_FIELDS))
        return files
