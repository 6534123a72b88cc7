"""METER's ``dataset.jsonl`` as the authors publish it (github.com/SCUNLP/METER): one JSON object per line, a
context and the list of its questions —

    {"context": "...", "questions": [{"ladder": "Causal_Discovery" | "Intervention" | "Counterfactual",
     "question": "...", "answer": 0-4, "option_0": "...", ..., "option_4": "..."}, ...]}

No id (an entry is identified by its line), no cause–effect pair, no distractor categories: the answer is the
index (0–4) of the correct option, the level the ``ladder`` value (Causal_Discovery → L1, Intervention → L2,
Counterfactual → L3). Each line becomes an entry (its context), each question an item of it with its five
options (A–E for option_0 … option_4), at the editing stage. Every other field of a line or a question is kept
in the item's metadata (``published``). A line or question that does not fit is refused with its line and
reason, and then nothing is imported (``PublishedRowsRefused`` lists every refused line).

The platform's earlier layout, read from the paper's text (``id``, ``cause``, ``effect``, ``L1``–``L3`` with
letter-keyed options), is still read, for files written in it."""

import json
from pathlib import Path

from django.db import transaction

from annotation.importing.errors import ImportFileError
from annotation.importing.mapping import fold
from annotation.importing.published import PublishedReport, PublishedRowsRefused
from annotation.importing.tables import open_table
from annotation.models import Item, ItemGroup, Project
from annotation.services import NOBODY, NewItem, item_create, items_create

from . import pipeline
from .stems import LETTERS, LEVELS, ROLES

DISTRACTOR_ROLES = set(ROLES[1:])


class PublishedMeterError(ValueError):
    """What is wrong with the file, naming the line (counted from 1, as an editor shows it)."""


LADDER = {"causal_discovery": "L1", "intervention": "L2", "counterfactual": "L3"}
OPTION_KEYS = tuple(f"option_{index}" for index in range(5))
QUESTION_FIELDS = {"ladder", "question", "answer", *OPTION_KEYS}  # what a question's item is made of
SOURCE = "meter:published"


def is_published_meter(data: bytes, filename: str) -> bool:
    """Whether the file looks like METER's JSONL (its first entry has a context and its questions, or a level
    in the earlier layout); other files go through the common import."""
    if not filename.lower().endswith((".jsonl", ".json", ".ndjson")):
        return False
    if published_columns(data, filename) is not None:
        return True
    first = next((line for line in data.decode("utf-8", "replace").splitlines() if line.strip()), "")
    try:
        record = json.loads(first)
    except ValueError:
        return False
    return isinstance(record, dict) and "context" in record and ("levels" in record or "L1" in record)


def published_entries_read(data: bytes) -> list[dict]:
    """One dict per line: external_id, context, cause, effect, line, and per level its question, the option
    texts by letter, the answer letter, roles and rationales by letter. Raises PublishedMeterError."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise PublishedMeterError(f"the file is not UTF-8 (byte {exc.start + 1})") from exc
    entries, seen = [], {}
    for line, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            record = json.loads(raw)
        except ValueError as exc:
            raise PublishedMeterError(f"line {line}: malformed JSON ({exc})") from exc
        if not isinstance(record, dict):
            raise PublishedMeterError(f"line {line}: an entry is a JSON object")
        entry = _entry(record, line)
        if entry["external_id"]:
            if entry["external_id"] in seen:
                raise PublishedMeterError(
                    f"line {line}: id {entry['external_id']!r} is also on line {seen[entry['external_id']]}"
                )
            seen[entry["external_id"]] = line
        entries.append(entry)
    if not entries:
        raise PublishedMeterError("the file has no entries")
    return entries


def _entry(record: dict, line: int) -> dict:
    pair = record.get("cause_effect") or record.get("pair") or {}
    fields = {
        name: str(record.get(name) or (pair.get(name) if isinstance(pair, dict) else "") or "").strip()
        for name in ("context", "cause", "effect")
    }
    missing = [name for name, value in fields.items() if not value]
    if missing:
        raise PublishedMeterError(f"line {line}: {', '.join(missing)} missing or empty")
    levels = record.get("levels") if isinstance(record.get("levels"), dict) else record
    return {
        "external_id": str(record.get("id") or "").strip(),
        "line": line,
        **fields,
        "levels": {level: _level(levels.get(level), line, level) for level in LEVELS},
    }


def _level(spec, line: int, level: str) -> dict:
    where = f"line {line}, {level}"
    if not isinstance(spec, dict):
        raise PublishedMeterError(f"{where}: the question is missing")
    question = str(spec.get("question") or "").strip()
    if not question:
        raise PublishedMeterError(f"{where}: the question is empty")
    options = spec.get("options")
    if isinstance(options, list):
        options = dict(zip(LETTERS, options))
    if (
        not isinstance(options, dict)
        or sorted(options) != list(LETTERS)
        or not all(isinstance(text, str) and text.strip() for text in options.values())
    ):
        raise PublishedMeterError(f"{where}: options must be five non-empty texts, A to E")
    answer = str(spec.get("answer") or "").strip().upper()
    if answer not in tuple(LETTERS):  # "" is in the string "ABCDE"
        raise PublishedMeterError(f"{where}: answer must be a letter A to E, not {spec.get('answer')!r}")
    categories = spec.get("categories") or {}
    roles = {
        letter: "correct" if letter == answer else str(categories.get(letter) or "other")
        for letter in LETTERS
    }
    wrong = [
        f"{letter}: {role}"
        for letter, role in roles.items()
        if letter != answer and role not in DISTRACTOR_ROLES | {"other"}
    ]
    if wrong or (categories and categories.get(answer) not in (None, "correct")):
        kinds = ", ".join(sorted(DISTRACTOR_ROLES))
        raise PublishedMeterError(
            f"{where}: categories must name the answer's letter correct and the others "
            f"one of {kinds} ({', '.join(wrong) or answer})"
        )
    rationales = spec.get("rationales") or {}
    return {
        "question": question,
        "options": {letter: options[letter].strip() for letter in LETTERS},
        "answer": answer,
        "roles": roles,
        "rationales": {letter: str(rationales.get(letter) or "").strip() for letter in LETTERS},
    }


@transaction.atomic
def published_entries_import(*, project: Project, data: bytes) -> list[ItemGroup]:
    """Every entry of a published METER file, with its three questions at the editing stage."""
    groups = []
    for entry in published_entries_read(data):
        external_id = entry["external_id"]
        if external_id and ItemGroup.objects.filter(project=project, external_id=external_id).exists():
            raise PublishedMeterError(f"line {entry['line']}: entry {external_id} is already in the project")
        group = pipeline.entry_create(
            project=project,
            external_id=external_id,
            context=entry["context"],
            cause=entry["cause"],
            effect=entry["effect"],
        )
        group.metadata = {**group.metadata, "stage": "editing", "source": "meter:published"}
        group.save(update_fields=["metadata"])
        for level, spec in entry["levels"].items():
            _question_create(group, level, spec)
        groups.append(group)
    return groups


def _question_create(entry: ItemGroup, level: str, spec: dict) -> Item:
    return item_create(
        project=entry.project,
        group_id=entry.pk,
        position_in_group=LEVELS.index(level) + 1,
        question=spec["question"],
        causal_class=level,
        source="meter:published",
        external_id=f"{entry.external_id}-{level}" if entry.external_id else "",
        reference_answer=spec["options"][spec["answer"]],
        answer_provenance={"kind": "import", "source": "meter:published"},
        metadata={
            "role": pipeline.QUESTION,
            "level": level,
            "stage": "editing",
            "published_answer": spec["answer"],
            "rounds": {"1": {"stage": "editing"}},
        },
        options=[
            {
                "role": spec["roles"][letter],
                "text": spec["options"][letter],
                "rationale": spec["rationales"][letter],
                "position": LETTERS.index(letter),
            }
            for letter in LETTERS
        ],
        note=f"{level} question imported as published",
    )


# --- the published layout: a context and its list of questions -----------------------------------------


def published_columns(data: bytes, filename: str) -> list[str] | None:
    """The file's fields when it is in the published layout (``context`` and ``questions``), else None."""
    try:
        columns = open_table(data, filename).columns
    except ImportFileError:
        return None
    return columns if "context" in columns and "questions" in columns else None


def published_dataset_read(data: bytes, filename: str) -> tuple[list[dict], PublishedReport]:
    """The entries of a published ``dataset.jsonl``: each with its ``line``, ``context``, ``questions`` (level,
    ladder, question, options A–E, answer letter, the question's other fields) and the line's other fields.
    Refused lines go in the report (the caller refuses the file when there are any)."""
    report = PublishedReport(group_word="entries")
    report.used.update({"context", "questions", *QUESTION_FIELDS})
    table = open_table(data, filename)
    entries = []
    for line, record in table.rows:
        report.records += 1
        entry = _published_entry(record, line, report)
        if entry is not None:
            entries.append(entry)
    report.refused.extend(table.errors)
    report.refused.sort(key=lambda error: error.line)
    if not report.records and not report.refused:
        report.refuse(0, "", "the file has no entries")
    return entries, report


def _published_entry(record: dict, line: int, report: PublishedReport) -> dict | None:
    context = record.get("context")
    if not isinstance(context, str) or not context.strip():
        report.refuse(line, "context", "is missing or empty")
        return None
    questions = record.get("questions")
    if not isinstance(questions, list) or not questions:
        report.refuse(line, "questions", "must be a non-empty list of questions")
        return None
    extra = {key: value for key, value in record.items() if key not in ("context", "questions")}
    report.kept.update(extra)
    read = []
    for number, spec in enumerate(questions, start=1):
        question = _published_question(spec, f"questions[{number - 1}]", line, report)
        if question is None:
            return None
        read.append(question)
    return {"line": line, "context": context.strip(), "questions": read, "published": extra}


def _published_question(spec, where: str, line: int, report: PublishedReport) -> dict | None:
    if not isinstance(spec, dict):
        report.refuse(line, where, "a question is a JSON object")
        return None
    level = LADDER.get(fold(str(spec.get("ladder") or "")))
    if level is None:
        report.refuse(
            line,
            f"{where}.ladder",
            f"unknown ladder {spec.get('ladder')!r} (use Causal_Discovery, Intervention or Counterfactual)",
        )
        return None
    question = spec.get("question")
    if not isinstance(question, str) or not question.strip():
        report.refuse(line, f"{where}.question", "is missing or empty")
        return None
    options = [spec.get(key) for key in OPTION_KEYS]
    empty = [key for key, text in zip(OPTION_KEYS, options) if not isinstance(text, str) or not text.strip()]
    if empty:
        report.refuse(
            line, f"{where}.{empty[0]}", "is missing or empty (a question has option_0 to option_4)"
        )
        return None
    answer = spec.get("answer")
    if isinstance(answer, str) and answer.strip().isdigit():
        answer = int(answer.strip())
    if isinstance(answer, float) and answer.is_integer():
        answer = int(answer)
    if not isinstance(answer, int) or isinstance(answer, bool) or not 0 <= answer <= 4:
        report.refuse(line, f"{where}.answer", f"must be the correct option's index, 0 to 4, not {answer!r}")
        return None
    extra = {key: value for key, value in spec.items() if key not in QUESTION_FIELDS}
    report.kept.update(extra)
    return {
        "level": level,
        "ladder": spec["ladder"],
        "question": question.strip(),
        "options": [text.strip() for text in options],
        "answer": answer,
        "published": extra,
    }


@transaction.atomic
def published_dataset_import(*, project: Project, data: bytes, filename: str) -> PublishedReport:
    """Every entry of METER's published ``dataset.jsonl``, its questions at the editing stage; all or none."""
    entries, report = published_dataset_read(data, filename)
    # An entry is identified by its line (the file gives no id), within the file it comes from.
    stem = Path(filename).stem[:150]
    taken = set(
        ItemGroup.objects.filter(
            project=project, external_id__in=[f"{stem}-{entry['line']}" for entry in entries]
        ).values_list("external_id", flat=True)
    )
    for entry in entries:
        if f"{stem}-{entry['line']}" in taken:
            report.refuse(
                entry["line"], "", f"the entry of this line of {filename} is already in the project"
            )
    if report.refused:
        raise PublishedRowsRefused(filename, report)
    items = []
    for entry in entries:
        external_id = f"{stem}-{entry['line']}"
        group = ItemGroup.objects.create(
            project=project,
            kind=pipeline.ENTRY,
            external_id=external_id,
            context=entry["context"],
            metadata={"stage": "editing", "source": SOURCE, "line": entry["line"], **_kept(entry)},
        )
        report.groups += 1
        for position, spec in enumerate(entry["questions"]):
            items.append(_published_item(group, position, spec, entry))
    report.items = len(items_create(project=project, items=items))
    return report


def _kept(entry: dict) -> dict:
    return {"published": entry["published"]} if entry["published"] else {}


def _published_item(group: ItemGroup, position: int, spec: dict, entry: dict) -> NewItem:
    metadata = {
        "role": pipeline.QUESTION,
        "level": spec["level"],
        "ladder": spec["ladder"],
        "stage": "editing",
        "published_answer": spec["answer"],
        "line": entry["line"],
        "rounds": {"1": {"stage": "editing"}},
    }
    published = {**entry["published"], **spec["published"]}
    if published:
        metadata["published"] = published
    return NewItem(
        group_id=group.pk,
        position_in_group=position + 1,
        question=spec["question"],
        causal_class=spec["level"],
        source=SOURCE,
        external_id=f"{group.external_id}-q{position + 1}",
        reference_answer=spec["options"][spec["answer"]],
        author=NOBODY,
        answer_provenance={"kind": "import", "source": SOURCE},
        review=True,
        metadata=metadata,
        options=[
            {"role": "correct" if index == spec["answer"] else "other", "text": text, "position": index}
            for index, text in enumerate(spec["options"])
        ],
        note=f"{spec['level']} question imported as published",
    )
