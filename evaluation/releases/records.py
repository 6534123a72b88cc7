"""The exported record of an item, frozen into a release, and its canonical form for the checksum.

Every record has the same fields with the same types, so the JSONL, CSV and Parquet files of a
release load with one schema. ``metadata`` is a JSON string for that reason (its keys vary).
"""

import hashlib
import json
from collections.abc import Iterable
from functools import cache

import orjson

FIELDS = [
    "id",
    "question",
    "context",
    "answer",
    "answer_by",
    "answer_model",
    "answer_prompt",
    "causal_class",
    "topic",
    "origin",
    "source",
    "group",
    "position_in_group",
    "options",
    "correct_option",
    "review_rounds",
    "metadata",
]

OPTION_FIELDS = ["letter", "text", "role", "rationale"]


@cache
def arrow_schema():
    """The Arrow schema of a record, built when a file is written: pyarrow (~50 MB) is not loaded when Django
    starts, only by the processes that export."""
    import pyarrow as pa

    schema = pa.schema(
        [
            pa.field(name, pa.int32() if name in ("position_in_group", "review_rounds") else pa.string())
            for name in FIELDS
            if name != "options"
        ]
    )
    return schema.insert(
        FIELDS.index("options"),
        pa.field("options", pa.list_(pa.struct([pa.field(name, pa.string()) for name in OPTION_FIELDS]))),
    )


# Hugging Face `datasets` features, written into the card so every format loads with the same types.
FEATURES_YAML = [
    {"name": name, "dtype": "int32" if name in ("position_in_group", "review_rounds") else "string"}
    if name != "options"
    else {"name": "options", "list": [{"name": field, "dtype": "string"} for field in OPTION_FIELDS]}
    for name in FIELDS
]


def item_record(row, *, slug: str, options: list[tuple], models_by_call: dict | None = None) -> dict:
    """The release record of an approved item.

    ``row`` is one of ``frozen_rows``'s rows (plain values, the JSON fields as text); ``options`` are its
    (position, text, role, rationale) in letter order.
    """
    by_model = row.answer_by == "model"
    model = prompt = ""
    if by_model:  # the provenance only says something about model answers
        provenance = json_value(row.provenance_text)
        provenance = provenance if isinstance(provenance, dict) else {}
        model, prompt = answer_model_and_prompt(provenance, models_by_call or {})
    grouped = row.group_id is not None
    return {
        "id": row.external_id or f"{slug}-{row.pk}",
        "question": row.question,
        "context": row.context or (row.group_context if grouped else ""),
        "answer": row.reference_answer,
        "answer_by": row.answer_by or "",
        "answer_model": model,
        "answer_prompt": prompt,
        "causal_class": row.causal_class,
        "topic": row.topic_label or "",
        "origin": row.origin,
        "source": row.source,
        "group": (row.group_external_id or f"group-{row.group_id}") if grouped else "",
        "position_in_group": row.position_in_group if grouped else 0,
        "options": [
            {"letter": chr(ord("A") + position), "text": text, "role": role, "rationale": rationale}
            for position, text, role, rationale in options
        ],
        "correct_option": ",".join(chr(ord("A") + option[0]) for option in options if option[2] == "correct"),
        "review_rounds": row.round,
        "metadata": _metadata_text(json_value(row.metadata_text)),
    }


def json_value(text: str | None):
    """A JSON field read as text: orjson, several times faster than the ORM's ``json.loads``, which stays the
    judge for what orjson refuses (integers beyond 64 bits, NaN written by Python)."""
    if text is None:
        return None
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return json.loads(text)


# json.dumps(metadata, ensure_ascii=False, sort_keys=True), without building an encoder for every item.
_METADATA_ENCODER = json.JSONEncoder(ensure_ascii=False, sort_keys=True)


def _metadata_text(metadata) -> str:
    return _METADATA_ENCODER.encode(metadata) if metadata else "{}"


def answer_model_and_prompt(provenance: dict, models_by_call: dict) -> tuple[str, str]:
    """Which model and prompt version wrote an answer, from its provenance or the model call it names."""
    call = models_by_call.get(provenance.get("call_id") or provenance.get("llm_call_id")) or {}
    model = str(provenance.get("model") or call.get("model") or "")
    prompt = str(provenance.get("template") or provenance.get("prompt") or call.get("template") or "")
    version = provenance.get("template_version") or provenance.get("prompt_version")
    if prompt and version and f"v{version}" not in prompt:
        prompt = f"{prompt} v{version}"
    return model, prompt


def canonical_line(record: dict) -> bytes:
    """One UTF-8 JSON line, keys sorted, no spaces: the form the checksum and the JSONL files share.

    (Byte for byte what ``json.dumps(record, ensure_ascii=False, sort_keys=True, separators=(",", ":"))``
    gives for these records; orjson is used because it is an order of magnitude faster.)
    """
    return orjson.dumps(record, option=orjson.OPT_SORT_KEYS | orjson.OPT_APPEND_NEWLINE)


def checksum(lines_by_split: Iterable[Iterable[bytes]]) -> str:
    """SHA-256 of the canonical lines of train, then dev, then test: of the three JSONL files concatenated."""
    digest = hashlib.sha256()
    for lines in lines_by_split:
        for line in lines:
            digest.update(line)
    return digest.hexdigest()
