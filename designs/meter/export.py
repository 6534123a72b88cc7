"""METER's own export: one row per gold entry with the paper's fields, built from a release's frozen records.

``meter/<split>.jsonl`` holds what a model is shown and the key: the context, the three questions with options
A–E and the answer letter. ``meter/categories.jsonl`` holds, apart from that text, what each letter is
(correct or which distractor category) and its rationale, for the error analysis by category.
"""

import json
from collections import defaultdict

from .stems import LETTERS, LEVELS

SPLITS = ("train", "dev", "test")
ENTRY_FIELDS = ["id", "context", *LEVELS]
CATEGORY_FIELDS = ["id", "split", *LEVELS]


def entries_by_split(records_by_split: dict[str, list[dict]]) -> dict[str, list[dict]]:
    """Frozen release records (question items) grouped into entries, in release order, per split."""
    result = {}
    for split, records in records_by_split.items():
        grouped: dict[str, list[dict]] = defaultdict(list)
        for record in records:
            grouped[record["group"]].append(record)
        result[split] = [_entry(group, questions) for group, questions in grouped.items()]
    return result


def _entry(group: str, questions: list[dict]) -> dict:
    by_level = {}
    for record in questions:
        level = json.loads(record["metadata"] or "{}").get("level") or record["causal_class"]
        options = {option["letter"]: option for option in record["options"]}
        by_level[level] = {
            "question": record["question"],
            "options": {letter: options[letter]["text"] for letter in LETTERS if letter in options},
            "answer": record["correct_option"],
            "categories": {letter: options[letter]["role"] for letter in LETTERS if letter in options},
            "rationales": {letter: options[letter]["rationale"] for letter in LETTERS if letter in options},
        }
    missing = [level for level in LEVELS if level not in by_level]
    if missing:
        raise ValueError(f"entry {group!r} is released without its {', '.join(missing)} question(s)")
    return {"id": group, "context": questions[0]["context"], "levels": by_level}


def model_row(entry: dict) -> dict:
    """What a model is shown, and the answer key: no categories, no rationales."""
    return {
        "id": entry["id"],
        "context": entry["context"],
        **{
            level: {key: entry["levels"][level][key] for key in ("question", "options", "answer")}
            for level in LEVELS
        },
    }


def category_row(entry: dict, split: str) -> dict:
    return {
        "id": entry["id"],
        "split": split,
        **{
            level: {
                "categories": entry["levels"][level]["categories"],
                "rationales": entry["levels"][level]["rationales"],
            }
            for level in LEVELS
        },
    }
