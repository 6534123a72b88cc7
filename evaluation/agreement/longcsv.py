"""Long-format CSV of judgments, ``unit,rater,value``: one row per judgment, an empty value a missing one.

The columns are dictionary-encoded block by block, so a value is looked at once per distinct value of a block,
not once per row: 500,000 judgments read in a fraction of a second. A plain file (no quotes, no carriage
returns, no empty lines, every line with the header's number of fields: what programs write) is split here
with string methods; anything else goes to pyarrow's CSV reader, which reads quoted fields and says where a
line is short. pyarrow alone adds ~50 MB to the process, a quarter of the command's memory budget, so the
plain path does not import it. Both give the same table (the tests compare them).
"""

import csv
import io
from pathlib import Path

import numpy as np
from django.utils.translation import gettext as _

from .table import (
    MISSING,
    AgreementInputError,
    RatingTable,
    _sort_key,
    whole_number_range,
)

REQUIRED_COLUMNS = ("unit", "rater", "value")


def read_long_csv(
    path: Path | str, *, level: str = "nominal", categories: list[str] | None = None
) -> RatingTable:
    """The judgments of a CSV file as a table. Numeric values are read as numbers; for the interval and ratio
    levels they must be. ``categories`` gives the order of an ordinal scale and categories nobody used;
    without it, an ordered scale of whole numbers runs from the lowest value seen to the highest
    (``RatingTable.scale_source`` says which)."""
    try:
        with open(path, "rb") as handle:
            first_line = handle.readline().decode("utf-8-sig")
    except FileNotFoundError as exc:
        raise AgreementInputError(f"{path}: no such file") from exc
    except UnicodeDecodeError as exc:
        raise AgreementInputError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from exc
    header = [name.strip().lower() for name in next(csv.reader(io.StringIO(first_line)), [])]
    missing = [name for name in REQUIRED_COLUMNS if name not in header]
    if missing:
        raise AgreementInputError(
            f"{path}: missing column(s) {', '.join(missing)}; the header must name unit, rater and value"
        )
    encoders = _plain_columns(path, len(header), [header.index(name) for name in REQUIRED_COLUMNS])
    if encoders is None:
        encoders = _arrow_columns(path, header)
    (units, unit_codes), (raters, rater_codes), (texts, value_codes) = (
        encoder.result() for encoder in encoders
    )
    empty_unit = _is_empty(units, unit_codes)
    empty_rater = _is_empty(raters, rater_codes)
    empty = np.flatnonzero(empty_unit | empty_rater)
    if len(empty):
        row = int(empty[0])
        raise AgreementInputError(
            f"{path}, line {row + 2}: {'unit' if empty_unit[row] else 'rater'} is empty"
        )
    numbers = [_number(text) if text else None for text in texts]
    numeric = all(number is not None for text, number in zip(texts, numbers) if text)
    if level in ("interval", "ratio") and not numeric:
        bad = next(
            index for index, (text, number) in enumerate(zip(texts, numbers)) if text and number is None
        )
        line = int(np.flatnonzero(value_codes == bad)[0]) + 2
        raise AgreementInputError(
            f"{path}, line {line}: value {texts[bad]!r} is not a number ({level} level)"
        )
    values = [(number if numeric else text) if text else None for text, number in zip(texts, numbers)]
    seen = sorted({value for value in values if value is not None}, key=_sort_key)
    if categories is not None:
        domain = [_number(c) if numeric and _number(c) is not None else c for c in categories]
        source = _("given by --categories")
    elif level == "ordinal" and not numeric:
        raise AgreementInputError(
            f"{path}: the ordinal level needs numeric values or --categories giving the order of the scale"
        )
    elif level != "nominal" and numeric and whole_number_range(seen):
        domain = whole_number_range(seen)
        source = _("every whole number from the lowest value to the highest")
    else:
        domain = seen
        source = _("the values in the file")
    try:
        return _table(units, raters, values, domain, unit_codes, rater_codes, value_codes, source)
    except AgreementInputError as exc:
        raise AgreementInputError(f"{path}: {exc}") from exc


def _table(units, raters, values, domain, unit_codes, rater_codes, value_codes, source: str) -> RatingTable:
    """The table of the encoded rows, refusing what ``RatingTable.from_rows`` refuses, with the same words."""
    code_of = {value: code for code, value in enumerate(domain)}
    judged = np.array([value is not None for value in values], dtype=bool)[value_codes]
    outside = [index for index, value in enumerate(values) if value is not None and value not in code_of]
    keys = rater_codes[judged].astype(np.int64) * max(len(units), 1) + unit_codes[judged]
    if np.bincount(keys, minlength=len(raters) * len(units)).max(initial=0) > 1:
        _keys, first = np.unique(keys, return_index=True)
        repeated = np.ones(len(keys), dtype=bool)
        repeated[first] = False
        row = int(np.flatnonzero(judged)[np.flatnonzero(repeated)[0]])
        raise AgreementInputError(
            f"rater {raters[rater_codes[row]]!r} judged unit {units[unit_codes[row]]!r} more than once"
        )
    if outside:
        row = int(np.flatnonzero(np.isin(value_codes, outside))[0])
        raise AgreementInputError(
            f"value {values[value_codes[row]]!r} is not one of the categories ({', '.join(map(str, domain))})"
        )
    category_of_value = np.array(
        [code_of.get(value, MISSING) if value is not None else MISSING for value in values], dtype=np.int64
    )
    codes = np.full((len(raters), len(units)), MISSING, dtype=np.int64)
    codes[rater_codes[judged], unit_codes[judged]] = category_of_value[value_codes[judged]]
    return RatingTable(units=units, raters=raters, categories=list(domain), codes=codes, scale_source=source)


# Text split per block of the plain path: its field strings (~60 bytes each) stay a few MB.
_PLAIN_BLOCK = 1 << 18


def _plain_columns(path, n_columns: int, positions: list[int]) -> list["_Encoder"] | None:
    """The three columns of a plain file, split with string methods block by block; None when the file is
    not plain (a quote, a carriage return, an empty line, a line whose fields differ from the header's, text
    that is not UTF-8), and pyarrow reads it instead. On such files pyarrow's reader splits at every comma and
    newline as this does (it skips empty lines, which are not plain here), so the tables are the same."""
    encoders = [_Encoder() for _position in positions]
    stride = n_columns + 1
    with open(path, "rb") as handle:
        handle.readline()  # the header, read already
        rest = b""
        while True:
            block = handle.read(_PLAIN_BLOCK)
            data = rest + block
            cut = len(data) if not block else data.rfind(b"\n") + 1
            data, rest = data[:cut], data[cut:]
            if data:
                if b'"' in data or b"\r" in data:
                    return None
                try:
                    text = data.decode("utf-8")
                except UnicodeDecodeError:
                    return None
                text = text.removesuffix("\n")
                # Each newline becomes a field of its own between two commas: the file is plain when those
                # fields fall every n_columns + 1 fields, so each line has exactly the header's fields.
                fields = text.replace("\n", ",\n,").split(",")
                lines = text.count("\n") + 1
                if len(fields) != lines * stride - 1 or fields[n_columns::stride].count("\n") != lines - 1:
                    return None
                for encoder, position in zip(encoders, positions):
                    encoder.add_texts(fields[position::stride])
            if not block:
                return encoders


def _arrow_columns(path, header: list[str]) -> list["_Encoder"]:
    """The three columns by pyarrow's CSV reader (quoted fields and the like); a short line is reported."""
    import pyarrow as pa
    from pyarrow import csv as pa_csv

    names = [f"{name}#{position}" for position, name in enumerate(header)]  # unique even if a header repeats
    wanted = [names[header.index(name)] for name in REQUIRED_COLUMNS]
    short_rows: list[tuple[int, int, int]] = []
    encoders = [_Encoder() for _name in REQUIRED_COLUMNS]
    try:
        # Batch by batch, so memory holds one batch of text and the codes, never the whole file as strings.
        reader = pa_csv.open_csv(
            path,
            read_options=pa_csv.ReadOptions(
                column_names=names, skip_rows=1, use_threads=False, block_size=1 << 16
            ),
            convert_options=pa_csv.ConvertOptions(
                column_types={name: pa.string() for name in names},
                include_columns=wanted,
                strings_can_be_null=False,
                quoted_strings_can_be_null=False,
            ),
            parse_options=pa_csv.ParseOptions(invalid_row_handler=lambda row: _short_row(row, short_rows)),
        )
        for batch in reader:
            for encoder, name in zip(encoders, wanted):
                encoder.add(batch.column(name))
    except pa.ArrowInvalid as exc:
        raise AgreementInputError(_unreadable(path, exc)) from exc
    if short_rows:
        number, expected, actual = short_rows[0]
        raise AgreementInputError(f"{path}, line {number}: {actual} field(s) where the header has {expected}")
    return encoders


class _Encoder:
    """The distinct values of a column, stripped, in order of first appearance, and each row's index among them.
    Only the distinct values of each batch are looked at in Python."""

    def __init__(self):
        self.index: dict[str, int] = {}
        self.raw: dict[str, int] = {}  # the plain path's texts as read, before stripping
        self.codes: list[np.ndarray] = []

    def add(self, column) -> None:
        """A pyarrow column."""
        encoded = column.dictionary_encode()
        indices = encoded.indices  # int32 without nulls, read from its buffer: to_numpy() would import pandas
        positions = np.frombuffer(
            indices.buffers()[1], dtype=np.int32, count=len(indices), offset=indices.offset * 4
        )
        self._add(encoded.dictionary.to_pylist(), positions)

    def add_texts(self, texts: list[str]) -> None:
        """A list of strings. Each distinct text is looked at once in the whole file (``raw`` remembers it), the
        rows are mapped to their codes in C."""
        raw = self.raw
        distinct = dict.fromkeys(texts)  # in order of first appearance
        if not distinct.keys() <= raw.keys():
            index = self.index
            for text in distinct:
                if text not in raw:
                    raw[text] = index.setdefault(text.strip(), len(index))
        self.codes.append(np.fromiter(map(raw.__getitem__, texts), dtype=np.int32, count=len(texts)))

    def _add(self, distinct: list[str], positions: np.ndarray) -> None:
        remap = np.array(
            [self.index.setdefault(text.strip(), len(self.index)) for text in distinct], dtype=np.int32
        )
        self.codes.append(remap[positions] if len(remap) else positions.copy())

    def result(self) -> tuple[list[str], np.ndarray]:
        return list(self.index), np.concatenate(self.codes) if self.codes else np.zeros(0, dtype=np.int32)


def _unreadable(path, exc: Exception) -> str:
    """The reader's complaint in words: invalid UTF-8 is located by byte, as Python finds it."""
    try:
        Path(path).read_bytes().decode("utf-8")
    except UnicodeDecodeError as decode_error:
        return f"{path}: not UTF-8 text ({decode_error.reason} at byte {decode_error.start})"
    return f"{path}: not a readable CSV file ({str(exc).splitlines()[0]})"


def _is_empty(values: list[str], codes: np.ndarray) -> np.ndarray:
    return codes == values.index("") if "" in values else np.zeros(len(codes), dtype=bool)


def _short_row(row, found: list) -> str:
    """Note a row whose number of fields differs from the header's (the first is reported) and skip it."""
    found.append((row.number or 0, row.expected_columns, row.actual_columns))
    return "skip"


def _number(text: str) -> float | int | None:
    try:
        number = float(text)
    except ValueError:
        return None
    return int(number) if number.is_integer() else number
