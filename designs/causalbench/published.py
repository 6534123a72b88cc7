"""CausalBench's CSV parts as they are published: one file per domain, one row per question, with the
paper's own columns — text: "Scenario and Question"; math: "Mathematical Scenario", "Question"; code:
"Code", "Question"; each with "Question Type", "Ground Truth" and "Explanation". The four questions of a
scenario share its text; they become one scenario with ``scenario_add``. Read through the import's table
reader, so the parts may also come as TSV, XLSX, JSONL or Parquet. All scenarios or none."""

from collections import OrderedDict

from django.db import transaction

from annotation.importing.mapping import fold
from annotation.importing.tables import open_table
from annotation.models import ItemGroup, Project

from .design import QUESTION_TYPES, ScenarioInvalid, scenario_add

PERSPECTIVE_BY_TYPE = {fold(label): key for key, label in QUESTION_TYPES.items()} | {
    fold(key): key for key in QUESTION_TYPES
}
SCENARIO_COLUMNS = {"scenario_and_question": "text", "mathematical_scenario": "math", "code": "code"}


def causalbench_published_import(
    *, project: Project, data: bytes, filename: str, id_prefix: str = ""
) -> list[ItemGroup]:
    """Every scenario of a published CausalBench part. Raises ScenarioInvalid naming the row."""
    table = open_table(data, filename)
    columns = {fold(column): column for column in table.columns}
    domain_column = next((name for name in SCENARIO_COLUMNS if name in columns), None)
    if domain_column is None:
        raise ScenarioInvalid(
            f'{filename}: no scenario column ("Scenario and Question", "Mathematical Scenario" '
            f'or "Code"); found: {", ".join(table.columns)}'
        )
    domain = SCENARIO_COLUMNS[domain_column]
    missing = [name for name in ("question_type", "ground_truth") if name not in columns]
    if domain != "text" and "question" not in columns:
        missing.append("question")
    if missing:
        raise ScenarioInvalid(f"{filename}: missing column(s) {', '.join(missing)}")
    scenarios: OrderedDict[str, list] = OrderedDict()
    for row, (_line, record) in enumerate(table.rows, start=1):
        value = str(record.get(columns[domain_column]) or "")
        if domain == "text":
            context, question = _split_text(value)
        else:
            context, question = value, str(record.get(columns["question"]) or "").strip()
        kind = fold(str(record.get(columns["question_type"]) or ""))
        perspective = PERSPECTIVE_BY_TYPE.get(kind)
        if perspective is None:
            raise ScenarioInvalid(
                f"row {row}: unknown question type {record.get(columns['question_type'])!r} "
                f"(use {', '.join(QUESTION_TYPES.values())})"
            )
        scenarios.setdefault(context.strip(), []).append(
            {
                "perspective": perspective,
                "question": question,
                "row": row,
                "answer": str(record.get(columns["ground_truth"]) or ""),
                "explanation": str(record.get(columns.get("explanation", ""), "") or ""),
            }
        )
    return _store(project, domain, scenarios, id_prefix or f"causalbench-{domain}")


def _split_text(value: str) -> tuple[str, str]:
    """The text part puts the scenario and the question in one cell: the question is its last paragraph
    (as CausalBench writes it), else its last sentence."""
    text = value.strip()
    if "\n\n" in text:
        context, _sep, question = text.rpartition("\n\n")
        return context, question.strip()
    head, sep, tail = text[:-1].rpartition(". ")
    return (head + ".", tail + text[-1]) if sep else ("", text)


@transaction.atomic
def _store(project: Project, domain: str, scenarios: dict, prefix: str) -> list[ItemGroup]:
    groups = []
    for number, (context, questions) in enumerate(scenarios.items(), start=1):
        rows = ", ".join(str(question.pop("row")) for question in questions)
        try:
            groups.append(
                scenario_add(
                    project=project,
                    domain=domain,
                    context=context,
                    questions=questions,
                    external_id=f"{prefix}-{number}",
                    source="causalbench:published",
                )
            )
        except ScenarioInvalid as exc:
            raise ScenarioInvalid(f"rows {rows}: {exc}") from exc
    return groups
