"""METER's JSONL as it is published (github.com/SCUNLP/METER; paper, section 3): one line per entry with its
context, its cause–effect pair and its three questions (L1 causal discovery, L2 intervention, L3
counterfactual), each with five options and the answer letter:

    {"id": "...", "context": "...", "cause": "...", "effect": "...",
     "L1": {"question": "...", "options": {"A": "...", ..., "E": "..."}, "answer": "C"},
     "L2": {...}, "L3": {...}}

The levels may also sit under "levels"; options may be a list (A–E in order); a level may say what each
letter is ("categories": {letter: contradictory, unfounded, reversal or irrelevant}) and why ("rationales"),
as METER's own category file does. The letters are kept as published. Each line becomes an entry whose three
questions go to the editing round, as generated ones do. All entries or none."""

import json

from django.db import transaction

from annotation.models import Item, ItemGroup, Project
from annotation.services import item_create

from . import pipeline
from .stems import LETTERS, LEVELS, ROLES

DISTRACTOR_ROLES = set(ROLES[1:])


class PublishedMeterError(ValueError):
    """What is wrong with the file, naming the line (counted from 1, as an editor shows it)."""


def is_published_meter(data: bytes, filename: str) -> bool:
    """Whether the file looks like METER's JSONL (its first entry has a context and a level); other files go
    through the common import."""
    if not filename.lower().endswith((".jsonl", ".json", ".ndjson")):
        return False
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
