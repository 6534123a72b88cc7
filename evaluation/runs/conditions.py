"""The prompting conditions of each answer format, and the benchmark-answer template each one uses."""

import json

OPEN, MULTIPLE_CHOICE, YES_NO = "open", "multiple_choice", "yes_no"

# format → condition → name of the benchmark_answer template
CONDITIONS = {
    OPEN: {"class-agnostic": "class-agnostic", "class-informed": "class-informed"},
    MULTIPLE_CHOICE: {
        "zero-shot": "mc-zero-shot",
        "few-shot": "mc-few-shot",
        "chain-of-thought": "mc-chain-of-thought",
    },
    YES_NO: {"zero-shot": "yes-no", "chain-of-thought": "yes-no-chain-of-thought"},
}
DEFAULT_CONDITIONS = {
    OPEN: ["class-agnostic", "class-informed"],
    MULTIPLE_CHOICE: ["zero-shot"],
    YES_NO: ["zero-shot"],
}
CLOSED = (MULTIPLE_CHOICE, YES_NO)
# The sources the judge ranks: the reference answer and the open conditions' responses.
REFERENCE = "reference"


def letter(position: int) -> str:
    return chr(ord("A") + position)


def record_metadata(record: dict) -> dict:
    """A release record keeps its metadata as a JSON string (one schema for every format)."""
    value = record.get("metadata") or {}
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return {}
    return value if isinstance(value, dict) else {}


def options_text(record: dict) -> str:
    return "\n".join(f"{option['letter']}) {option['text']}" for option in record.get("options") or [])


def correct_letters(record: dict) -> set[str]:
    return {part.strip() for part in (record.get("correct_option") or "").split(",") if part.strip()}


def option_role(record: dict, chosen: str) -> str:
    for option in record.get("options") or []:
        if option["letter"] == chosen:
            return option.get("role") or "other"
    return ""


def question_of(record: dict, design, language: str) -> dict:
    """What a run asks of a released item: the design's own question for it when it has one (a CausalityCheck
    task), else the item's question and options; with the letters that are right."""
    asked = design.benchmark_question(record, language)
    if asked:
        return {**asked, "own": True}
    return {
        "question": record["question"],
        "options": record.get("options") or [],
        "correct": correct_letters(record),
        "own": False,
    }
