"""The exported record of an item, frozen into a release, and its canonical form for the checksum.

Every record has the same fields with the same types, so the JSONL, CSV and Parquet files of a
release load with one schema. ``metadata`` is a JSON string for that reason (its keys vary).
"""

import hashlib
import json
from collections.abc import Iterable
from functools import cache
from json.encoder import c_make_encoder, encode_basestring

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


# The columns ``item_record`` reads, in this order (``build.frozen_chunks`` selects them as plain tuples).
FROZEN_VALUES = (
    "pk",
    "external_id",
    "question",
    "context",
    "reference_answer",
    "answer_by",
    "causal_class",
    "topic_id",
    "origin",
    "source",
    "group_id",
    "position_in_group",
    "round",
    "provenance_text",
    "metadata_text",
)
PK, ANSWER_BY, CAUSAL_CLASS, TOPIC_ID, GROUP_ID, PROVENANCE_TEXT = 0, 5, 6, 7, 10, 13


def item_record(
    row: tuple,
    *,
    slug: str,
    options: list[tuple],
    topics: dict[int, str],
    groups: dict[int, tuple[str, str]],
    models_by_call: dict | None = None,
) -> dict:
    """The release record of an approved item, its keys already in sorted order.

    ``row`` holds the values of FROZEN_VALUES in that order (the JSON fields as text); ``options`` are its
    (position, text, role, rationale) in letter order; ``topics`` the labels by topic id, ``groups`` the
    (external id, context) by group id.
    """
    (
        pk,
        external_id,
        question,
        context,
        reference_answer,
        answer_by,
        causal_class,
        topic_id,
        origin,
        source,
        group_id,
        position_in_group,
        review_rounds,
        provenance_text,
        metadata_text,
    ) = row
    model = prompt = ""
    if answer_by == "model":  # the provenance only says something about model answers
        provenance = json_value(provenance_text)
        provenance = provenance if isinstance(provenance, dict) else {}
        model, prompt = answer_model_and_prompt(provenance, models_by_call or {})
    grouped = group_id is not None
    group_external_id, group_context = groups.get(group_id, ("", ""))
    return {
        "answer": reference_answer,
        "answer_by": answer_by or "",
        "answer_model": model,
        "answer_prompt": prompt,
        "causal_class": causal_class,
        "context": context or group_context,
        "correct_option": ",".join(chr(65 + option[0]) for option in options if option[2] == "correct")
        if options
        else "",
        "group": (group_external_id or f"group-{group_id}") if grouped else "",
        "id": external_id or f"{slug}-{pk}",
        "metadata": _metadata_text(json_value(metadata_text)) if metadata_text else "{}",
        "options": [
            {"letter": chr(65 + position), "rationale": rationale, "role": role, "text": text}
            for position, text, role, rationale in options
        ],
        "origin": origin,
        "position_in_group": position_in_group if grouped else 0,
        "question": question,
        "review_rounds": review_rounds,
        "source": source,
        "topic": topics.get(topic_id) or "",
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


# json.dumps(metadata, ensure_ascii=False, sort_keys=True): the C encoder that ``JSONEncoder.encode`` builds
# for every call, built once (no circular check: values parsed from JSON cannot hold cycles).
_METADATA_ENCODER = json.JSONEncoder(ensure_ascii=False, sort_keys=True)
_encode_metadata = (
    c_make_encoder(None, _METADATA_ENCODER.default, encode_basestring, None, ": ", ", ", True, False, True)
    if c_make_encoder is not None
    else None
)


def _metadata_text(metadata) -> str:
    if not metadata:
        return "{}"
    if _encode_metadata is None:
        return _METADATA_ENCODER.encode(metadata)
    return "".join(_encode_metadata(metadata, 0))


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
