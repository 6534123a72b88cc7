"""CausalBench's CSV parts as they are published (Hugging Face dataset ``CCLV/CausalBench``): one file per
domain, one row per question, four questions per scenario. The scenario's text is under "Code", "Mathematical
Scenario" or "Scenario and Question"; then "Question", "Question Type", "Ground Truth", "Explanation", and the
scenario's id, whose header differs by part ("Causal_Scenario_ID", "Scenario_ID", "Scenario ID").

"Question Type" is written as in the paper ("From Cause to Effect without Intervention", …) in any case; the
platform's own names ("Cause-to-Effect", …) are read too. The scenario id groups the four questions (the text
part repeats the scenario with each question, so its text does not) and is kept. "Ground Truth" is mostly Yes or
No; another value is kept as published as the question's answer and listed in the report. Every other column is
kept in the item's metadata (``published``). Read through the import's table reader, so a part may also come as
TSV, XLSX, JSON, JSONL or Parquet. All scenarios or none: refused rows are listed with their reasons."""

from collections import OrderedDict
from pathlib import Path

from django.db import transaction

from annotation.importing.mapping import fold
from annotation.importing.published import PublishedReport, PublishedRowsRefused
from annotation.importing.tables import open_table
from annotation.models import ItemGroup, Project

from .design import QUESTION_TYPES, ScenarioInvalid, normalise_answer, scenario_add, scenario_check

# The paper's names of the four question types, as the published parts write them (in any case).
PAPER_TYPES = {
    "cause_to_effect": "From Cause to Effect without Intervention",
    "effect_to_cause": "From Effect to Cause without Intervention",
    "cause_to_effect_intervention": "From Cause to Effect with Intervention",
    "effect_to_cause_intervention": "From Effect to Cause with Intervention",
}
PERSPECTIVE_BY_TYPE = (
    {fold(label): key for key, label in QUESTION_TYPES.items()}
    | {fold(key): key for key in QUESTION_TYPES}
    | {fold(label): key for key, label in PAPER_TYPES.items()}
)
SCENARIO_COLUMNS = {"scenario_and_question": "text", "mathematical_scenario": "math", "code": "code"}
ID_COLUMNS = ("causal_scenario_id", "scenario_id")  # code; math and text ("Scenario_ID", "Scenario ID")


def causalbench_part_import(
    *, project: Project, data: bytes, filename: str, id_prefix: str = ""
) -> tuple[list[ItemGroup], PublishedReport]:
    """Every scenario of a published CausalBench part, and the import's report. Raises ScenarioInvalid for a
    part without its columns or a scenario that does not fit, PublishedRowsRefused listing refused rows."""
    table = open_table(data, filename)
    columns = {fold(column): column for column in reversed(table.columns)}
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
    id_column = next((columns[name] for name in ID_COLUMNS if name in columns), None)
    used = {columns[domain_column], columns["question_type"], columns["ground_truth"]}
    used.update(columns[name] for name in ("question", "explanation") if name in columns)
    if id_column:
        used.add(id_column)
    kept = [column for column in table.columns if column not in used]
    report = PublishedReport(group_word="scenarios", used=used, kept=set(kept))
    other_answers: dict[str, int] = {}
    scenarios: OrderedDict[str, dict] = OrderedDict()
    for row, (_line, record) in enumerate(table.rows, start=1):  # rows counted from 1, the header left out
        report.records += 1
        value = str(record.get(columns[domain_column]) or "")
        asked = str(record.get(columns["question"]) or "").strip() if "question" in columns else ""
        if domain == "text":
            context, question = _text_scenario(value, asked)
        else:
            context, question = value, asked
        raw_type = record.get(columns["question_type"])
        perspective = PERSPECTIVE_BY_TYPE.get(fold(str(raw_type or "")))
        if perspective is None:
            report.refuse(
                row,
                "Question Type",
                f"unknown question type {raw_type!r} (use {', '.join(PAPER_TYPES.values())})",
            )
            continue
        answer = str(
            record.get(columns["ground_truth"]) if record.get(columns["ground_truth"]) is not None else ""
        )
        if not answer.strip():
            report.refuse(row, "Ground Truth", "is empty")
            continue
        if normalise_answer(answer) is None:
            other_answers[answer.strip()] = other_answers.get(answer.strip(), 0) + 1
        scenario_id = _id_text(record.get(id_column)) if id_column else ""
        key = f"id:{scenario_id}" if scenario_id else f"text:{context.strip()}"
        scenario = scenarios.setdefault(key, {"id": scenario_id, "context": context.strip(), "questions": []})
        # The record's own fields: a part read from JSON may have a key its first records, which named the
        # columns, lack.
        published = {
            column: value
            for column, value in record.items()
            if column not in used and value not in (None, "")
        }
        report.kept.update(published)
        scenario["questions"].append(
            {
                "perspective": perspective,
                "question": question,
                "row": row,
                "answer": answer,
                "explanation": str(record.get(columns.get("explanation", ""), "") or ""),
                "published": {"question_type": raw_type, **published},
            }
        )
    report.refused.extend(table.errors)
    report.refused.sort(key=lambda error: error.line)
    if report.refused:
        raise PublishedRowsRefused(filename, report)
    # A scenario is named by its published id, else by its file and place in it (a part without ids).
    prefix = id_prefix or f"causalbench-{domain}"
    stem = Path(filename).stem[:100]
    for number, scenario in enumerate(scenarios.values(), start=1):
        scenario["external_id"] = (
            f"{prefix}-{scenario['id']}" if scenario["id"] else f"{prefix}-{stem}-{number}"
        )
        _check(domain, scenario)
    taken = set(
        ItemGroup.objects.filter(
            project=project, external_id__in=[scenario["external_id"] for scenario in scenarios.values()]
        ).values_list("external_id", flat=True)
    )
    for scenario in scenarios.values():
        if scenario["external_id"] in taken:  # the same part imported again
            for question in scenario["questions"]:
                report.refuse(question["row"], "", "the scenario of this row is already in the project")
    if report.refused:
        raise PublishedRowsRefused(filename, report)
    if other_answers:
        values = ", ".join(f"{value!r} ({count})" for value, count in sorted(other_answers.items()))
        report.notes.append(
            f"{sum(other_answers.values())} questions have a Ground Truth other than yes or no, kept as "
            f"published: {values}"
        )
    groups = _store(project, domain, scenarios)
    report.groups = len(groups)
    report.items = sum(len(scenario["questions"]) for scenario in scenarios.values())
    return groups, report


def _id_text(value) -> str:
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return "" if value is None else str(value).strip()


def _text_scenario(value: str, asked: str) -> tuple[str, str]:
    """The text part's scenario and question: the "Question" column when the part has one (the cell then ends
    with it, and the scenario is what comes before), else the cell's last paragraph or sentence."""
    if asked:
        text = value.strip()
        return (text[: -len(asked)].rstrip() if text.endswith(asked) else text), asked
    return _split_text(value)


def _split_text(value: str) -> tuple[str, str]:
    """The text part puts the scenario and the question in one cell: the question is its last paragraph
    (as CausalBench writes it), else its last sentence."""
    text = value.strip()
    if "\n\n" in text:
        context, _sep, question = text.rpartition("\n\n")
        return context, question.strip()
    head, sep, tail = text[:-1].rpartition(". ")
    return (head + ".", tail + text[-1]) if sep else ("", text)


def _check(domain: str, scenario: dict) -> None:
    """Raise ScenarioInvalid naming the rows of a scenario that does not fit (four questions, one per type)."""
    rows = ", ".join(str(question["row"]) for question in scenario["questions"])
    try:
        scenario_check(
            domain=domain,
            context=scenario["context"],
            questions=scenario["questions"],
            where=f"scenario {scenario['external_id']}",
            other_answers=True,
        )
    except ScenarioInvalid as exc:
        raise ScenarioInvalid(f"rows {rows}: {exc}") from exc


@transaction.atomic
def _store(project: Project, domain: str, scenarios: dict) -> list[ItemGroup]:
    """The scenarios, each checked already (``_check``), with their four questions."""
    groups = []
    for scenario in scenarios.values():
        questions = [
            {key: value for key, value in question.items() if key != "row"}
            for question in scenario["questions"]
        ]
        metadata = {"published_scenario_id": scenario["id"]} if scenario["id"] else {}
        groups.append(
            scenario_add(
                project=project,
                domain=domain,
                context=scenario["context"],
                questions=questions,
                external_id=scenario["external_id"],
                source="causalbench:published",
                metadata=metadata,
                other_answers=True,
            )
        )
    return groups
