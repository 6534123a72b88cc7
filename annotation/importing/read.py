"""Reading source questions from CSV or JSONL bytes into checked rows.

Every problem becomes a ``RowError`` naming the line, the field and the reason.
Problems with the whole file (empty, no ``question`` column) are fatal; problems
with single rows are collected so the caller can refuse the file or skip them.
"""

import csv
import io
import json
from dataclasses import dataclass, field

# Column names people use for the same thing (Hugging Face exports, Portuguese headers).
COLUMN_ALIASES = {
    "question": ("question", "pergunta", "text", "texto"),
    "causal_class": ("causal_class", "class", "label", "pearl_class", "classe"),
    "is_causal": ("is_causal", "causal", "causal_question"),
    "source": ("source", "fonte"),
    "topic": ("topic", "topico", "tópico"),
    "id": ("id", "external_id", "question_id"),
    "context": ("context", "contexto"),
    "answer": ("answer", "resposta", "reference_answer"),
}
CANONICAL = {alias: key for key, aliases in COLUMN_ALIASES.items() for alias in aliases}

# Portuguese (and a few spelling variants) of Pearl's three rungs.
LABEL_ALIASES = {
    "associativa": "associational",
    "associacional": "associational",
    "associative": "associational",
    "association": "associational",
    "intervencional": "interventional",
    "intervencionista": "interventional",
    "intervention": "interventional",
    "contrafactual": "counterfactual",
    "contrafactuais": "counterfactual",
}

TRUE_WORDS = {"1", "true", "yes", "y", "sim", "s", "verdadeiro", "t"}
FALSE_WORDS = {"0", "false", "no", "n", "nao", "não", "falso", "f"}
_UNKNOWN = object()


class _Booleans(dict):
    """'true', ' Sim ', 'FALSE'… → True / False; '' → None; anything else → _UNKNOWN. Remembers each spelling."""

    def __missing__(self, raw: str):
        word = raw.strip().lower()
        value = None if not word else True if word in TRUE_WORDS else False if word in FALSE_WORDS else _UNKNOWN
        self[raw] = value
        return value


_BOOLEANS = _Booleans()
MAX_FIELD_CHARS = 20_000


@dataclass(frozen=True)
class RowError:
    line: int
    field: str
    reason: str

    def __str__(self) -> str:
        where = f"line {self.line}" if self.line else "file"
        return f"{where}, {self.field}: {self.reason}" if self.field else f"{where}: {self.reason}"

    def as_dict(self) -> dict:
        return {"line": self.line, "field": self.field, "reason": self.reason}


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
    metadata: dict = field(default_factory=dict)
    text_key: str = ""


class ImportFileError(Exception):
    """The file cannot be read at all (it is empty, or has no question column)."""

    def __init__(self, errors: list[RowError]):
        self.errors = errors
        super().__init__("; ".join(str(error) for error in errors))


class LabelResolver:
    def __init__(self, label_set: list[str]):
        self.labels = list(label_set)
        self.lookup = {label.lower(): label for label in label_set}
        for alias, label in LABEL_ALIASES.items():
            if label in label_set:
                self.lookup.setdefault(alias, label)
        self._seen: dict[str, str | None] = {}

    def resolve(self, value: str) -> str | None:
        # A file repeats a handful of spellings; remember each one.
        try:
            return self._seen[value]
        except KeyError:
            result = self._seen[value] = self.lookup.get(value.strip().lower())
            return result


def read_source(data: bytes, filename: str, labels: LabelResolver) -> tuple[list[SourceRow], list[RowError]]:
    """Parse ``data`` as CSV or JSONL (by extension, else by its first character)."""
    text, errors = _decode(data)
    if not text or text.isspace():
        raise ImportFileError([RowError(0, "", "the file is empty")])
    if _looks_like_jsonl(filename, text):
        records = _jsonl_records(text, errors)
    else:
        records = _csv_records(text, errors)
    rows = []
    for line_number, record in records:
        row = _check_record(line_number, record, labels, errors)
        if row is not None:
            rows.append(row)
    return rows, errors


def _decode(data: bytes) -> tuple[str, list[RowError]]:
    """Decode UTF-8 (BOM allowed). A line that is not UTF-8 becomes an error and an empty line."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        return data.decode("utf-8"), []
    except UnicodeDecodeError:
        pass
    lines, errors = [], []
    for number, raw in enumerate(data.splitlines(keepends=True), start=1):
        try:
            lines.append(raw.decode("utf-8"))
        except UnicodeDecodeError as exc:
            bad = raw[exc.start : exc.start + 1].hex()
            errors.append(RowError(number, "", f"invalid UTF-8 (byte 0x{bad} at column {exc.start + 1})"))
            lines.append("\n")
    return "".join(lines), errors


def _looks_like_jsonl(filename: str, text: str) -> bool:
    lower = filename.lower()
    if lower.endswith((".jsonl", ".ndjson", ".json")):
        return True
    if lower.endswith((".csv", ".tsv", ".txt")):
        return False
    return text.lstrip().startswith("{")


def _jsonl_records(text: str, errors: list[RowError]):
    # split on "\n" only: JSON strings may hold U+2028 and other characters splitlines() breaks on
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            errors.append(RowError(number, "", f"malformed JSON ({exc.msg} at column {exc.colno})"))
            continue
        if not isinstance(record, dict):
            errors.append(RowError(number, "", f"expected a JSON object, found {type(record).__name__}"))
            continue
        yield number, _canonical(record)


def _canonical(record: dict) -> dict:
    """Keys renamed to the canonical column names; the first of several aliases wins."""
    result: dict = {}
    for key, value in record.items():
        name = CANONICAL.get(key.strip().lower(), key)
        if name not in result or result[name] in (None, ""):
            result[name] = value
    return result


def _csv_records(text: str, errors: list[RowError]):
    reader = csv.reader(io.StringIO(text))
    try:
        header = next(reader)
    except csv.Error as exc:
        raise ImportFileError([RowError(1, "", f"unreadable CSV header ({exc})")]) from exc
    found = [name.strip() for name in header]
    header = [CANONICAL.get(name.lower(), name) for name in found]
    if "question" not in header:
        raise ImportFileError(
            [RowError(1, "question", f"required column is missing (found columns: {', '.join(found) or 'none'})")]
        )
    previous_end = reader.line_num
    while True:
        start = previous_end + 1
        try:
            values = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            errors.append(RowError(start, "", f"unreadable CSV row ({exc})"))
            previous_end = reader.line_num
            continue
        previous_end = reader.line_num
        if not any(values):
            continue
        if len(values) > len(header):
            errors.append(RowError(start, "", f"{len(values)} cells but the header has {len(header)} columns"))
            continue
        yield start, dict(zip(header, values))


def _text(value) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


def _check_record(line: int, record: dict, labels: LabelResolver, errors: list[RowError]) -> SourceRow | None:
    found_errors = len(errors)
    get = record.get
    question = _text(get("question"))
    if not question:
        errors.append(RowError(line, "question", "is missing or empty"))
    elif len(question) > MAX_FIELD_CHARS:
        errors.append(RowError(line, "question", f"is {len(question)} characters long (limit {MAX_FIELD_CHARS})"))

    raw_class = _text(get("causal_class"))
    causal_class = ""
    if raw_class:
        causal_class = labels.resolve(raw_class) or ""
        if not causal_class:
            allowed = ", ".join(labels.labels)
            errors.append(RowError(line, "causal_class", f"unknown class {raw_class!r} (expected one of: {allowed})"))

    raw_causal = get("is_causal")
    is_causal = _BOOLEANS[raw_causal] if isinstance(raw_causal, str) else raw_causal
    if type(raw_causal) in (int, float) and raw_causal in (0, 1):  # JSON 0 / 1
        is_causal = bool(raw_causal)
    if not (is_causal is None or isinstance(is_causal, bool)):  # _UNKNOWN, or a number / list in JSONL
        is_causal = None
        errors.append(RowError(line, "is_causal", f"{raw_causal!r} is not a boolean (use true/false)"))

    if len(errors) > found_errors:
        return None
    metadata = {key: value for key, value in record.items() if key not in COLUMN_ALIASES and value not in ("", None)}
    return SourceRow(
        line=line,
        question=question,
        causal_class=causal_class,
        is_causal=is_causal,
        source=_text(get("source"))[:200],
        topic=_text(get("topic"))[:200],
        external_id=_text(get("id"))[:200],
        context=_text(get("context")),
        answer=_text(get("answer")),
        metadata=metadata,
    )
