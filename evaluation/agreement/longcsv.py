"""Long-format CSV of judgments, ``unit,rater,value``: one row per judgment, an empty value a missing one."""

import csv
import io
from pathlib import Path

from .table import AgreementInputError, RatingTable

REQUIRED_COLUMNS = ("unit", "rater", "value")


def read_long_csv(path: Path | str, *, level: str = "nominal", categories: list[str] | None = None) -> RatingTable:
    """The judgments of a CSV file as a table. Numeric values are read as numbers; for the interval and ratio
    levels they must be. ``categories`` gives the order of an ordinal scale and categories nobody used."""
    try:
        text = Path(path).read_bytes().decode("utf-8-sig")
    except FileNotFoundError as exc:
        raise AgreementInputError(f"{path}: no such file") from exc
    except UnicodeDecodeError as exc:
        raise AgreementInputError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from exc
    reader = csv.DictReader(io.StringIO(text))
    header = [name.strip().lower() for name in reader.fieldnames or []]
    missing = [name for name in REQUIRED_COLUMNS if name not in header]
    if missing:
        raise AgreementInputError(
            f"{path}: missing column(s) {', '.join(missing)}; the header must name unit, rater and value"
        )
    reader.fieldnames = header
    rows = []
    for line, row in enumerate(reader, start=2):
        unit, rater = (row.get("unit") or "").strip(), (row.get("rater") or "").strip()
        if not unit or not rater:
            raise AgreementInputError(f"{path}, line {line}: {'unit' if not unit else 'rater'} is empty")
        rows.append((unit, rater, (row.get("value") or "").strip(), line))

    numeric = all(_number(value) is not None for *_, value, _line in rows if value)
    if level in ("interval", "ratio") and not numeric:
        bad = next((value, line) for *_, value, line in rows if value and _number(value) is None)
        raise AgreementInputError(f"{path}, line {bad[1]}: value {bad[0]!r} is not a number ({level} level)")
    if categories is not None:
        domain = [_number(c) if numeric and _number(c) is not None else c for c in categories]
    elif level == "ordinal" and not numeric:
        raise AgreementInputError(
            f"{path}: the ordinal level needs numeric values or --categories giving the order of the scale"
        )
    else:
        domain = None
    judgments = [
        (unit, rater, (_number(value) if numeric else value) if value else None) for unit, rater, value, _ in rows
    ]
    try:
        return RatingTable.from_rows(judgments, categories=domain)
    except AgreementInputError as exc:
        raise AgreementInputError(f"{path}: {exc}") from exc


def _number(text: str) -> float | int | None:
    try:
        number = float(text)
    except ValueError:
        return None
    return int(number) if number.is_integer() else number
