"""Checking the rows of a table (``tables``) through a column mapping (``mapping``) into source rows.

Every problem becomes a ``RowError`` naming the line, the field and the reason. Problems with the
whole file (empty, no question column) are fatal; problems with single rows are collected so the
caller can refuse the file or skip them. Class values that match no label are also counted per
value, with the lines they are on, so a file's own codes can be mapped in one go.
"""

import json
from collections.abc import Iterable
from dataclasses import dataclass, field

from .errors import ImportFileError, RowError
from .mapping import Mapping, fold

# Portuguese and English names (and spelling variants) of Pearl's three rungs, folded.
LABEL_ALIASES = {
    "associativa": "associational",
    "associativo": "associational",
    "associacional": "associational",
    "associacionais": "associational",
    "associacao": "associational",
    "associative": "associational",
    "association": "associational",
    "intervencional": "interventional",
    "intervencionais": "interventional",
    "intervencionista": "interventional",
    "intervencao": "interventional",
    "intervention": "interventional",
    "contrafactual": "counterfactual",
    "contrafactuais": "counterfactual",
    "contrafatual": "counterfactual",
    "counterfactuals": "counterfactual",
}

TRUE_WORDS = {"1", "true", "yes", "y", "sim", "s", "verdadeiro", "t"}
FALSE_WORDS = {"0", "false", "no", "n", "nao", "falso", "f"}
# Who wrote a reference answer: these words mean a person; any other name is a model's.
PERSON_WORDS = {
    "person",
    "human",
    "humano",
    "humana",
    "pessoa",
    "people",
    "annotator",
    "anotador",
    "anotadora",
    "especialista",
    "expert",
    "manual",
    "crowd",
}
MODEL_WORDS = {"model", "llm", "modelo", "ia", "ai", "machine", "maquina"}
_UNKNOWN = object()
MAX_FIELD_CHARS = 20_000
MAX_LINES_SHOWN = 20


class _Booleans(dict):
    """'true', ' Sim ', 'FALSE'… → True / False; '' → None; anything else → _UNKNOWN. Remembers each spelling."""

    def __missing__(self, raw: str):
        word = fold(raw)
        value = (
            None if not word else True if word in TRUE_WORDS else False if word in FALSE_WORDS else _UNKNOWN
        )
        self[raw] = value
        return value


_BOOLEANS = _Booleans()


@dataclass
class SourceRow:
    line: int
    question: str
    causal_class: str = ""
    is_causal: bool | None = None
    source: str = ""
    topic: str = ""
    external_id: str = ""
    context: str = ""
    answer: str = ""
    # "human", or a model's name ("" for an unnamed model) when answer_by_model is true
    answer_model: str | None = None
    metadata: dict = field(default_factory=dict)
    text_key: str = ""


class LabelResolver:
    """A class value → one of the project's labels: the label itself, its Portuguese / English names, in any
    case and with or without accents, or the file's own codes given in the mapping's values."""

    def __init__(self, label_set: list[str], translations: dict[str, str] | None = None):
        self.labels = list(label_set)
        self.lookup = {fold(label): label for label in label_set}
        for alias, label in LABEL_ALIASES.items():
            if label in label_set:
                self.lookup.setdefault(alias, label)
        for raw, label in (translations or {}).items():
            if label in label_set:
                self.lookup[fold(raw)] = label
        self._seen: dict[str, str | None] = {}

    def resolve(self, value: str) -> str | None:
        # A file repeats a handful of spellings; remember each one.
        try:
            return self._seen[value]
        except KeyError:
            result = self._seen[value] = self.lookup.get(fold(value))
            return result


class AnswererResolver:
    """An ``answer_by`` value → None (a person) or a model's name ("" when the file only says "model")."""

    def __init__(self, translations: dict[str, str] | None = None):
        self.translations = {fold(raw): value for raw, value in (translations or {}).items()}
        self._seen: dict[str, str | None] = {}

    def resolve(self, value: str) -> str | None:
        try:
            return self._seen[value]
        except KeyError:
            pass
        folded = fold(value)
        meaning = self.translations.get(folded, value.strip())
        folded_meaning = fold(meaning)
        if not folded_meaning or folded_meaning in PERSON_WORDS:
            result = None
        elif folded_meaning in MODEL_WORDS:
            result = ""
        else:
            result = meaning[:200]
        self._seen[value] = result
        return result


@dataclass
class UnknownValues:
    """Values of a field that matched nothing: value → how many rows, and the first lines."""

    by_field: dict[str, dict[str, dict]] = field(default_factory=dict)

    def add(self, field_name: str, value: str, line: int) -> None:
        entry = self.by_field.setdefault(field_name, {}).setdefault(value, {"count": 0, "lines": []})
        entry["count"] += 1
        if len(entry["lines"]) < MAX_LINES_SHOWN:
            entry["lines"].append(line)

    def as_dict(self) -> dict:
        return self.by_field

    def summary(self) -> list[str]:
        lines = []
        for field_name, values in self.by_field.items():
            for value, entry in sorted(values.items(), key=lambda pair: -pair[1]["count"]):
                where = ", ".join(str(line) for line in entry["lines"])
                more = ", …" if entry["count"] > len(entry["lines"]) else ""
                lines.append(f"{field_name} {value!r}: {entry['count']} row(s) (lines {where}{more})")
        return lines


def read_rows(
    records: Iterable[tuple[int, dict]],
    columns: list[str],
    mapping: Mapping,
    labels: LabelResolver,
    errors: list[RowError],
    unknown: UnknownValues,
) -> list[SourceRow]:
    """Check each record through ``mapping``; good rows are returned, problems appended to ``errors``."""
    if "question" not in mapping.columns:
        raise ImportFileError(
            [
                RowError(
                    1,
                    "question",
                    f"required column is missing (found columns: {', '.join(columns) or 'none'}); "
                    "map one, e.g. --columns question=COLUMN",
                )
            ]
        )
    check = _Checker(mapping, columns, labels, errors, unknown)
    return [row for row in (check(line, record) for line, record in records) if row is not None]


def _text(value) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def json_value(value):
    """A metadata value JSON can store (a spreadsheet's dates and Arrow's decimals become text)."""
    if value is None or isinstance(value, (str, int, float, bool, list, dict)):
        return value
    return str(value)


class _Checker:
    def __init__(
        self,
        mapping: Mapping,
        columns: list[str],
        labels: LabelResolver,
        errors: list[RowError],
        unknown: UnknownValues,
    ):
        self.column = {
            name: mapping.columns.get(name)
            for name in (
                "question",
                "causal_class",
                "is_causal",
                "source",
                "topic",
                "id",
                "context",
                "answer",
                "answer_by",
                "expertise",
            )
        }
        self.kept = mapping.metadata_columns(columns)
        self.labels = labels
        self.answerers = AnswererResolver(mapping.values.get("answer_by"))
        self.causal_words = {fold(raw): value for raw, value in mapping.values.get("is_causal", {}).items()}
        self.errors = errors
        self.unknown = unknown

    def __call__(self, line: int, record: dict) -> SourceRow | None:
        errors = self.errors
        found_errors = len(errors)
        column = self.column
        record_get = record.get

        def get(name):
            key = column[name]
            return record_get(key) if key is not None else None

        def text(name):
            # _text, with its most common case (a string) first
            key = column[name]
            if key is None:
                return ""
            value = record_get(key)
            return value.strip() if type(value) is str else _text(value)

        key = column["question"]
        value = record_get(key) if key is not None else None
        question = value.strip() if type(value) is str else _text(value)
        if not question:
            errors.append(RowError(line, "question", "is missing or empty"))
        elif len(question) > MAX_FIELD_CHARS:
            errors.append(
                RowError(line, "question", f"is {len(question)} characters long (limit {MAX_FIELD_CHARS})")
            )

        raw_class = text("causal_class")
        causal_class = ""
        if raw_class:
            causal_class = self.labels.resolve(raw_class) or ""
            if not causal_class:
                allowed = ", ".join(self.labels.labels)
                errors.append(
                    RowError(
                        line, "causal_class", f"unknown class {raw_class!r} (expected one of: {allowed})"
                    )
                )
                self.unknown.add("causal_class", raw_class, line)

        raw_causal = get("is_causal")
        if isinstance(raw_causal, str) and self.causal_words:
            raw_causal = self.causal_words.get(fold(raw_causal), raw_causal)
        is_causal = _BOOLEANS[raw_causal] if isinstance(raw_causal, str) else raw_causal
        if type(raw_causal) in (int, float) and raw_causal in (0, 1):  # JSON or spreadsheet 0 / 1
            is_causal = bool(raw_causal)
        if not (is_causal is None or isinstance(is_causal, bool)):  # _UNKNOWN, or a number / list
            is_causal = None
            errors.append(RowError(line, "is_causal", f"{raw_causal!r} is not a boolean (use true/false)"))

        if len(errors) > found_errors:
            return None
        answer = text("answer")
        answer_model = self.answerers.resolve(text("answer_by")) if answer else None
        metadata = {
            name: json_value(record[name]) for name in self.kept if record.get(name) not in ("", None)
        }
        expertise = text("expertise")
        if expertise:
            metadata["expertise"] = expertise
        return SourceRow(
            line=line,
            question=question,
            causal_class=causal_class,
            is_causal=is_causal,
            source=text("source")[:200],
            topic=text("topic")[:200],
            external_id=text("id")[:200],
            context=text("context"),
            answer=answer,
            answer_model=answer_model,
            metadata=metadata,
        )
