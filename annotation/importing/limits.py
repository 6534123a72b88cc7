"""What a file may cost before it is refused, checked before the cost is paid, at every door that reads a table.

- A zip (a .zip of splits, and every XLSX, which is one) is refused from its directory alone, before anything is
  extracted: too many members, too much once uncompressed, or a member that expands more than ``ZIP_MAX_RATIO``
  times (a decompression bomb).
- A spreadsheet's XML declares no DTD (no entities to expand), its shared strings hold at most
  ``XLSX_MAX_SHARED_STRINGS_BYTES`` and no single XML token (a tag with its attributes) is longer than
  ``XML_MAX_TOKEN_BYTES`` (expat re-reads a token it has not finished at every chunk fed to it).
- A table gives at most ``IMPORT_MAX_ROWS`` rows; the next one is refused with the limit named.
- Values come out as the database can store them: a float NaN or ±Infinity becomes null (JSON has no such
  number: PostgreSQL's jsonb refuses it), bytes become UTF-8 text, or the file is refused naming the column and
  the row.

The figures are settings (environment variables of the same names).
"""

import math
import zipfile
from collections.abc import Iterator

from django.conf import settings

from .errors import ImportFileError, RowError


def _limit(name: str, default: int) -> int:
    return int(getattr(settings, name, default))


def zip_checked(archive: zipfile.ZipFile, filename: str) -> zipfile.ZipFile:
    """``archive``, once its directory shows it is no bomb (nothing has been extracted to find out)."""
    members = archive.infolist()
    max_members = _limit("ZIP_MAX_MEMBERS", 1000)
    if len(members) > max_members:
        raise _refused(filename, f"the archive holds {len(members)} files (at most {max_members})")
    total = sum(member.file_size for member in members)
    max_total = _limit("ZIP_MAX_UNCOMPRESSED_BYTES", 512 * 1024 * 1024)
    if total > max_total:
        raise _refused(
            filename,
            f"the archive expands to {_megabytes(total)} (at most {_megabytes(max_total)})",
        )
    max_ratio = _limit("ZIP_MAX_RATIO", 100)
    for member in members:
        if member.file_size > 1024 * 1024 and member.file_size > max_ratio * max(member.compress_size, 1):
            raise _refused(
                filename,
                f"{member.filename} expands {member.file_size // max(member.compress_size, 1)} times "
                f"(at most {max_ratio}): a compression bomb?",
            )
    return archive


def _megabytes(size: int) -> str:
    return f"{size / (1024 * 1024):.0f} MB"


def _refused(filename: str, why: str) -> ImportFileError:
    return ImportFileError([RowError(0, "", f"{filename}: {why}")])


def no_dtd(*_args):
    """expat's handler for a document type declaration: a workbook's XML has none; one that does may declare
    entities that expand without end (the "billion laughs")."""
    raise ImportFileError([RowError(0, "", "the spreadsheet's XML declares a DTD, which workbooks never do")])


def token_checked(fed: int, last_event: int) -> None:
    """Refuse a document once more than ``XML_MAX_TOKEN_BYTES`` were fed since the parser's last event: one
    token that long (a tag with a huge attribute) is re-parsed at every chunk, quadratic in its length."""
    cap = _limit("XML_MAX_TOKEN_BYTES", 8 * 1024 * 1024)
    if fed - last_event > cap:
        raise ImportFileError(
            [RowError(0, "", f"the spreadsheet holds one XML token longer than {_megabytes(cap)}")]
        )


def shared_strings_checked(size: int) -> None:
    cap = _limit("XLSX_MAX_SHARED_STRINGS_BYTES", 128 * 1024 * 1024)
    if size > cap:
        raise ImportFileError(
            [
                RowError(
                    0, "", f"the spreadsheet's shared text is {_megabytes(size)} (at most {_megabytes(cap)})"
                )
            ]
        )


# --- values and rows --------------------------------------------------------------------------------------


def _storable(value, column: str, line: int):
    kind = type(value)
    if kind is float:
        return value if math.isfinite(value) else None
    if kind is bytes or kind is bytearray:
        try:
            return bytes(value).decode("utf-8")
        except UnicodeDecodeError:
            raise ImportFileError(
                [RowError(line, column, "binary data that is not UTF-8 text; store it as text")]
            ) from None
    if kind is list or kind is tuple:
        return [_storable(part, column, line) for part in value]
    if kind is dict:
        return {key: _storable(part, column, line) for key, part in value.items()}
    return value


_NEEDS_CARE = (float, bytes, bytearray, list, tuple, dict)


def storable_record(line: int, record: dict) -> dict:
    for column, value in record.items():
        if isinstance(value, _NEEDS_CARE):
            record[column] = _storable(value, column, line)
    return record


def storable_columns(lines: list[int], columns: dict[str, list]) -> dict[str, list]:
    for column, values in columns.items():
        # The types of a column (one or two: text, and None where empty), gathered by a loop in C.
        if any(issubclass(kind, _NEEDS_CARE) for kind in set(map(type, values))):
            columns[column] = [_storable(value, column, line) for line, value in zip(lines, values)]
    return columns


def too_many_rows() -> ImportFileError:
    cap = _limit("IMPORT_MAX_ROWS", 1_000_000)
    return ImportFileError(
        [RowError(0, "", f"the file has more than {cap:,} rows; split it into smaller files")]
    )


def bounded_rows(rows: Iterator[tuple[int, dict]]) -> Iterator[tuple[int, dict]]:
    cap = _limit("IMPORT_MAX_ROWS", 1_000_000)
    for count, (line, record) in enumerate(rows, start=1):
        if count > cap:
            raise too_many_rows()
        yield line, storable_record(line, record)


def bounded_chunks(chunks: Iterator[tuple[list[int], dict]]) -> Iterator[tuple[list[int], dict]]:
    cap = _limit("IMPORT_MAX_ROWS", 1_000_000)
    count = 0
    for lines, columns in chunks:
        count += len(lines)
        if count > cap:
            raise too_many_rows()
        yield lines, storable_columns(lines, columns)
