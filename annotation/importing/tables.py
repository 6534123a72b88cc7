"""Reading a tabular file of any of the formats researchers publish in, as its columns and streamed rows.

CSV (comma, semicolon or tab, sniffed), TSV, JSONL, XLSX (one sheet, streamed: ``xlsx``), Parquet, a Hugging Face
``save_to_disk`` folder (Arrow files, read with pyarrow: ``datasets`` is not needed) and a folder — or a
``.zip`` of one — holding parquet / jsonl / csv splits. Every reader yields ``(line, {column: value})``
lazily, so a large file is never held twice; ``line`` is what a person finds in the file: the line of a
CSV or JSONL (the header is line 1), the row number of a spreadsheet (the header is row 1), the row
number of a Parquet or Arrow table (first row 1, numbered on across splits). The import reads the rows as
chunks of columns instead (``Table.column_chunks``): a CSV straight from pyarrow's parser where it reads the
file exactly as the csv module does (``_arrow_csv_table``), every other file from its rows.
"""

import codecs
import csv
import io
import itertools
import json
import tempfile
import zipfile
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from xml.parsers import expat

import numpy as np

from . import limits
from .errors import ImportFileError, RowError
from .jsonarray import array_records, starts_an_array

FORMATS = (
    "CSV, TSV, JSONL, XLSX, Parquet, JSON (an array of objects), a Hugging Face save_to_disk folder or a "
    "folder (or .zip) of splits"
)
TABULAR_SUFFIXES = (".csv", ".tsv", ".txt", ".jsonl", ".ndjson", ".json", ".xlsx", ".xlsm", ".parquet")
# Every name a readable file may end in; a file named otherwise (.xml, .pdf, .yaml…) is refused, naming FORMATS.
KNOWN_SUFFIXES = (*TABULAR_SUFFIXES, ".zip", ".arrow", ".feather")
ARROW_BATCH_ROWS = 5000
# What a damaged file raises while its rows are read (pyarrow's errors are ValueError / OSError subclasses).
UNREADABLE = (ValueError, OSError, KeyError, IndexError, EOFError, zipfile.BadZipFile, expat.ExpatError)


def unreadable(exc: Exception) -> ImportFileError:
    return ImportFileError(
        [
            RowError(
                0,
                "",
                f"the file could not be read to its end ({type(exc).__name__}); is it damaged or cut short?",
            )
        ]
    )


# Some rows of a table: their lines, and the list of their values in each column asked for.
Chunk = tuple[list[int], dict[str, list]]


@dataclass
class Table:
    """A file's columns (in file order) and its rows, read once and lazily: ``rows`` one at a time, or
    ``column_chunks`` a chunk at a time (one or the other)."""

    columns: list[str]
    rows: Iterator[tuple[int, dict]]
    format: str
    errors: list[RowError] = field(default_factory=list)
    sheets: list[str] = field(default_factory=list)
    # A reader that gives chunks of columns itself, without a dict per row: ``chunks(size, names)``.
    chunks: Callable[[int, list[str]], Iterator[Chunk]] | None = None

    def column_chunks(self, size: int, names: list[str]) -> Iterator[Chunk]:
        """The rows ``size`` at a time, each chunk as its lines and, for each of ``names``, the list of its rows'
        values (None where a row has none)."""
        if self.chunks is not None:
            yield from self.chunks(size, names)
            return
        while records := list(itertools.islice(self.rows, size)):
            yield records_as_columns(records, names)


def records_as_columns(records: list[tuple[int, dict]], names: list[str]) -> Chunk:
    """Rows as ``(line, {column: value})`` turned into a chunk of the columns ``names``."""
    return [line for line, _record in records], {
        name: [record.get(name) for _line, record in records] for name in names
    }


def open_table(
    data: bytes | None,
    filename: str,
    *,
    path: Path | None = None,
    sheet: str = "",
    stack: ExitStack | None = None,
    every_row: bool = False,
) -> Table:
    """The table in ``data`` (bytes of one file named ``filename``) or at ``path`` (a file or a folder).

    ``stack`` keeps temporary folders (an unpacked .zip) until the caller has read every row. ``every_row``: the
    caller reads the whole file (an import, not a preview of its first rows); a CSV is then parsed by pyarrow
    where it reads as the csv module would (``_arrow_csv_table``), which first reads the file through once.
    Raises ``ImportFileError`` for a file that is empty, unreadable, of no known format, or over a limit of
    ``limits`` (checked before the cost: a zip from its directory; rows and values as they are read).
    """
    table = _open_table(data, filename, path=path, sheet=sheet, stack=stack, every_row=every_row)
    return _bounded(table)


def _bounded(table: Table) -> Table:
    """``table`` giving at most ``IMPORT_MAX_ROWS`` rows, each value one the database can store."""
    table.rows = limits.bounded_rows(table.rows)
    if table.chunks is not None:
        chunks = table.chunks
        table.chunks = lambda size, names: limits.bounded_chunks(chunks(size, names))
    return table


def _open_table(
    data: bytes | None,
    filename: str,
    *,
    path: Path | None = None,
    sheet: str = "",
    stack: ExitStack | None = None,
    every_row: bool = False,
) -> Table:
    stack = stack or ExitStack()
    if path is not None and path.is_dir():
        return _folder_table(path, stack)
    if _unknown_suffix(filename):
        raise _refused(filename, "this is not a format the platform reads")
    if data is None:
        streamed = _streamed_table(path, filename, sheet, stack, every_row)
        if streamed is not None:
            return streamed
        data = path.read_bytes()
    if data.startswith(UTF16_BOMS):  # a CSV as spreadsheets save it ("Unicode text")
        try:
            data = data.decode("utf-16").encode("utf-8")
        except UnicodeDecodeError:
            raise ImportFileError(
                [RowError(0, "", "the file starts as UTF-16 but is not valid UTF-16")]
            ) from None
    lower = filename.lower()
    if lower.endswith(".zip") or data[:4] == b"PK\x03\x04" and not lower.endswith((".xlsx", ".xlsm")):
        if not zipfile.is_zipfile(io.BytesIO(data)):
            raise _refused(filename, "it is not a readable .zip")
        if _is_xlsx(data):
            return _xlsx_table(data, sheet)
        folder = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="import-")))
        _unzip(data, folder, filename)
        return _folder_table(folder, stack)
    if lower.endswith((".xlsx", ".xlsm")):
        return _xlsx_table(data, sheet)
    if lower.endswith(".parquet") or data[:4] == b"PAR1":
        return _parquet_table(data)
    if lower.endswith((".arrow", ".feather")):
        return _arrow_table([io.BytesIO(data)])
    if lower.endswith((".xls", ".ods", ".pdf", ".docx")) or _binary(data[:2048]):
        raise _refused(filename, "this is not a format the platform reads")
    return _text_table(data, filename, every_row)


UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")


def _unknown_suffix(filename: str) -> bool:
    """Whether ``filename`` ends in a suffix no reader takes (a name without a suffix is told by its bytes)."""
    name = Path(filename).name.lower()
    return "." in name.strip(".") and not name.endswith(KNOWN_SUFFIXES)


def _streamed_table(path: Path, filename: str, sheet: str, stack: ExitStack, every_row: bool) -> Table | None:
    """The table of a file read as its rows are asked for, so a 200 MB upload is never held whole: CSV, TSV
    and JSONL line by line, XLSX and Parquet from the file itself. None for the rarer cases (UTF-16, a .zip
    of splits, Arrow), which are read as bytes."""
    with path.open("rb") as handle:
        head = handle.read(2048)
    lower = filename.lower()
    if head.startswith(UTF16_BOMS) or lower.endswith((".zip", ".arrow", ".feather")):
        return None
    if head[:4] == b"PK\x03\x04":
        if not lower.endswith((".xlsx", ".xlsm")) and not _is_xlsx_file(path):
            return None
        return _xlsx_table(stack.enter_context(path.open("rb")), sheet)
    if lower.endswith(".parquet") or head[:4] == b"PAR1":
        return _parquet_files([path])
    if lower.endswith((".xlsx", ".xlsm", ".xls", ".ods", ".pdf", ".docx")) or _binary(head):
        return None  # refused (or found unreadable) as from bytes, with the same message
    if starts_an_array(head):
        return _json_array_table(stack.enter_context(path.open("rb")))
    table = _arrow_csv_table(None, filename, path) if every_row else None
    if table is not None:
        return table
    return _text_stream_table(stack.enter_context(path.open("rb")), filename)


def _is_xlsx_file(path: Path) -> bool:
    try:
        with zipfile.ZipFile(path) as archive:
            return "xl/workbook.xml" in archive.namelist()
    except zipfile.BadZipFile:
        return False


def _binary(head: bytes) -> bool:
    """NUL bytes in text that is not UTF-8: a binary file. (A NUL inside a UTF-8 text cell is a row's
    problem, reported with its line.)"""
    if b"\x00" not in head:
        return False
    try:
        codecs.getincrementaldecoder("utf-8")().decode(head, final=False)
    except UnicodeDecodeError:
        return True
    return False


def _refused(filename: str, why: str) -> ImportFileError:
    return ImportFileError([RowError(0, "", f"{filename}: {why}; use {FORMATS}")])


# --- text: CSV, TSV, JSONL ---------------------------------------------------------------------------


def _text_table(data: bytes, filename: str, every_row: bool = False) -> Table:
    if starts_an_array(data[:HEAD_BYTES]):
        return _json_array_table(io.BytesIO(data))
    table = _arrow_csv_table(data, filename) if every_row else None
    if table is not None:
        return table
    text, errors = decode(data)
    if not text or text.isspace():
        raise ImportFileError([RowError(0, "", "the file is empty")])
    if _looks_like_jsonl(filename, text):
        return _jsonl_table(text, errors)
    return _csv_table(text, filename, errors)


def _text_stream_table(handle, filename: str) -> Table:
    """CSV, TSV or JSONL from an open binary file, decoded line by line as ``decode`` does for bytes."""
    errors: list[RowError] = []
    lines = _decoded_lines(handle, errors)
    first = []
    for line in lines:  # the first line with text: empty file?, JSONL?, which delimiter?
        first.append(line)
        if line.strip():
            break
    if not first or not first[-1].strip():
        raise ImportFileError([RowError(0, "", "the file is empty")])

    def text_lines():
        yield from first
        yield from lines

    lower = filename.lower()
    jsonl = lower.endswith((".jsonl", ".ndjson", ".json")) or (
        not lower.endswith((".csv", ".tsv", ".txt")) and first[-1].lstrip().startswith("{")
    )
    if jsonl:
        return _jsonl_table_from(_jsonl_line_records(enumerate(text_lines(), start=1), errors), errors)
    delimiter = sniff_delimiter(filename, first[0].rstrip("\n"))
    reader = csv.reader(text_lines(), delimiter=delimiter)
    try:
        header = [name.strip() for name in next(reader)]
    except csv.Error as exc:
        raise ImportFileError([RowError(1, "", f"unreadable CSV header ({exc})")]) from exc
    return _csv_table_of(reader, header, delimiter, errors)


def _decoded_lines(handle, errors: list[RowError]) -> Iterator[str]:
    """The file's lines (split on "\n" only, as ``io.StringIO`` splits for the CSV reader) as text; a line
    that is not UTF-8 becomes an error and an empty line."""
    for number, raw in enumerate(handle, start=1):
        if number == 1 and raw.startswith(b"\xef\xbb\xbf"):
            raw = raw[3:]
        try:
            yield raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            bad = raw[exc.start : exc.start + 1].hex()
            errors.append(RowError(number, "", f"invalid UTF-8 (byte 0x{bad} at column {exc.start + 1})"))
            yield "\n"


def decode(data: bytes) -> tuple[str, list[RowError]]:
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
    """JSON Lines or a JSON array (either way, not a CSV)."""
    lower = filename.lower()
    if lower.endswith((".jsonl", ".ndjson", ".json")):
        return True
    if lower.endswith((".csv", ".tsv", ".txt")):
        return False
    return text.lstrip().startswith(("{", "["))


def _jsonl_table(text: str, errors: list[RowError]) -> Table:
    return _jsonl_table_from(_jsonl_records(text, errors), errors)


def _json_array_table(handle) -> Table:
    """A JSON array of objects, read incrementally (``jsonarray``); a row's line is its object's number."""
    errors: list[RowError] = []
    table = _jsonl_table_from(array_records(handle, errors), errors, "json")
    if not table.columns and not errors:
        raise ImportFileError([RowError(0, "", "the JSON array holds no object")])
    return table


def _jsonl_table_from(
    records: Iterator[tuple[int, dict]], errors: list[RowError], file_format: str = "jsonl"
) -> Table:
    first = []
    for record in records:  # the columns are the keys of the first rows, in order
        first.append(record)
        if len(first) >= 50:
            break
    columns = list(dict.fromkeys(key for _line, record in first for key in record))

    def rows():
        yield from first
        yield from records

    return Table(columns, rows(), file_format, errors)


def _jsonl_records(text: str, errors: list[RowError]) -> Iterator[tuple[int, dict]]:
    # split on "\n" only: JSON strings may hold U+2028 and other characters splitlines() breaks on
    return _jsonl_line_records(enumerate(text.split("\n"), start=1), errors)


def _jsonl_line_records(numbered_lines, errors: list[RowError]) -> Iterator[tuple[int, dict]]:
    for number, line in numbered_lines:
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            errors.append(RowError(number, "", f"malformed JSON ({exc.msg} at column {exc.colno})"))
            continue
        except ValueError:  # an integer of more digits than Python converts
            errors.append(RowError(number, "", "a number with too many digits"))
            continue
        except RecursionError:
            errors.append(RowError(number, "", "the JSON is nested too deeply"))
            continue
        if not isinstance(record, dict):
            errors.append(RowError(number, "", f"expected a JSON object, found {type(record).__name__}"))
            continue
        yield number, {str(key).strip(): value for key, value in record.items()}


def sniff_delimiter(filename: str, first_line: str) -> str:
    """Tab for a .tsv; otherwise whichever of tab, semicolon and comma the header line holds most of
    (a header with none of them is one column, and comma is as good as any)."""
    if filename.lower().endswith(".tsv"):
        return "\t"
    counts = {delimiter: first_line.count(delimiter) for delimiter in (",", ";", "\t")}
    best = max(counts, key=lambda delimiter: counts[delimiter])
    return best if counts[best] else ","


def _csv_table(text: str, filename: str, errors: list[RowError]) -> Table:
    delimiter = sniff_delimiter(filename, text[: text.find("\n") if "\n" in text else len(text)])
    reader = csv.reader(io.StringIO(text), delimiter=delimiter)
    try:
        header = [name.strip() for name in next(reader)]
    except csv.Error as exc:
        raise ImportFileError([RowError(1, "", f"unreadable CSV header ({exc})")]) from exc
    return _csv_table_of(reader, header, delimiter, errors)


def _csv_table_of(reader, header: list[str], delimiter: str, errors: list[RowError]) -> Table:
    """A CSV's table: its rows as dicts, or its chunks of columns straight from the reader's lists."""
    values = _csv_values(reader, header, errors)

    def chunks(size: int, names: list[str]) -> Iterator[Chunk]:
        where = {name: position for position, name in enumerate(header)}  # a repeated name: its last column
        width = len(header)
        while chunk := list(itertools.islice(values, size)):
            lines = [line for line, _cells in chunk]
            padded = [
                cells if len(cells) == width else cells + [None] * (width - len(cells))
                for _line, cells in chunk
            ]
            by_position = list(zip(*padded))
            yield (
                lines,
                {
                    name: list(by_position[where[name]]) if name in where else [None] * len(lines)
                    for name in names
                },
            )

    rows = ((line, dict(zip(header, cells))) for line, cells in values)
    return Table(header, rows, "tsv" if delimiter == "\t" else "csv", errors, chunks=chunks)


def _csv_values(reader, header: list[str], errors: list[RowError]) -> Iterator[tuple[int, list]]:
    """Each row's line and its cells (as many as the header has, or fewer)."""
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
            errors.append(
                RowError(start, "", f"{len(values)} cells but the header has {len(header)} columns")
            )
            continue
        yield start, values


CSV_FIELD_LIMIT = csv.field_size_limit()  # a longer cell is an unreadable row for the csv module
SCAN_BLOCK_BYTES = 1_000_000
ARROW_CSV_BLOCK_BYTES = 128 * 1024
HEAD_BYTES = 65_536  # the header line is within them, or the csv module reads the file


def _arrow_csv_table(data: bytes | None, filename: str, path: Path | None = None) -> Table | None:
    """A CSV or TSV (``data``, or the file at ``path``) read by pyarrow, in C, or None when the csv module
    must read it. Read in blocks either way: memory stays flat whatever the file's size.

    pyarrow reads quotes, doubled quotes and delimiters in cells as the csv module does; what it would read
    differently is left to the csv module: a cell spanning lines (a line with an odd number of quotes), a lone
    carriage return, a cell longer than the csv module's limit, a NUL byte, a header with quotes or with a
    repeated or empty name, text that is not UTF-8, a row with another number of cells than the header. Every
    row then lies on a line of its own, and the lines of the rows are the lines after the header that are not
    empty. The file is parsed twice: once to find whether pyarrow reads all of it, then for its rows."""
    import pyarrow as pa
    import pyarrow.csv as pa_csv

    def blocks() -> Iterator[bytes]:
        if data is not None:
            view = memoryview(data)
            yield from (
                view[start : start + SCAN_BLOCK_BYTES] for start in range(0, len(data), SCAN_BLOCK_BYTES)
            )
            return
        with path.open("rb") as handle:
            while block := handle.read(SCAN_BLOCK_BYTES):
                yield block

    if data is not None:
        head = data[:HEAD_BYTES]
    else:
        with path.open("rb") as handle:
            head = handle.read(HEAD_BYTES)
    head = head.removeprefix(b"\xef\xbb\xbf")
    if _looks_like_jsonl(filename, head.decode("utf-8", "replace")):
        return None
    first_end = head.find(b"\n")
    first = head[: first_end if first_end >= 0 else len(head)].rstrip(b"\r")
    if not first.strip() or b'"' in first or (first_end < 0 and len(head) == HEAD_BYTES):
        return None
    try:
        header_line = first.decode("utf-8")
    except UnicodeDecodeError:
        return None
    delimiter = sniff_delimiter(filename, header_line)
    header = [name.strip() for name in header_line.split(delimiter)]
    if "" in header or len(set(header)) != len(header):
        return None
    found = _row_lines(blocks())
    if found is None:
        return None
    lines, longest = found
    # pyarrow reads a block at a time, a row within one; small blocks keep its memory small (~60 times a block)
    block_size = max(ARROW_CSV_BLOCK_BYTES, 2 * longest)

    def batches():
        source = pa.BufferReader(data) if data is not None else pa.OSFile(str(path))
        return pa_csv.open_csv(
            source,
            read_options=pa_csv.ReadOptions(column_names=header, skip_rows=1, block_size=block_size),
            parse_options=pa_csv.ParseOptions(
                delimiter=delimiter, quote_char='"', double_quote=True, escape_char=False
            ),
            convert_options=pa_csv.ConvertOptions(
                column_types=dict.fromkeys(header, pa.string()),
                strings_can_be_null=False,
                quoted_strings_can_be_null=False,
            ),
        )

    def empty_rows(batch) -> np.ndarray:
        """The positions of a batch's rows with nothing but empty cells (the csv reader skips such a row), read
        off the string columns' offsets."""
        empty = np.ones(batch.num_rows, dtype=bool)
        for column in batch.columns:
            offsets = np.frombuffer(column.buffers()[1], dtype=np.int32)[
                column.offset : column.offset + len(column) + 1
            ]
            empty &= offsets[1:] == offsets[:-1]
        return np.flatnonzero(empty)

    try:
        count = 0
        skipped = []
        for batch in batches():
            skipped.extend((empty_rows(batch) + count).tolist())
            count += batch.num_rows
    except pa.ArrowException:  # a row with too few or too many cells, text that is not UTF-8
        return None
    if count != len(lines):
        return None
    lines = np.delete(lines, skipped) if skipped else lines

    def chunks(size: int, names: list[str]) -> Iterator[Chunk]:
        def parts():
            read = 0
            for batch in batches():
                empty = empty_rows(batch).tolist() if skipped else []
                columns = {}
                for name in names:
                    values = batch.column(name).to_pylist() if name in header else [None] * batch.num_rows
                    for position in reversed(empty):
                        del values[position]
                    columns[name] = values
                count = batch.num_rows - len(empty)
                yield lines[read : read + count].tolist(), columns
                read += count

        return _rechunked(parts(), size)

    rows = _chunk_rows(chunks(ARROW_BATCH_ROWS, header), header)
    return Table(header, rows, "tsv" if delimiter == "\t" else "csv", chunks=chunks)


def _rechunked(parts: Iterator[Chunk], size: int) -> Iterator[Chunk]:
    """Chunks of any sizes (a reader's batches) as chunks of ``size`` rows (the last one shorter)."""
    pending_lines: list[int] = []
    pending: dict[str, list] = {}
    for lines, columns in parts:
        pending_lines += lines
        for name, values in columns.items():
            pending.setdefault(name, []).extend(values)
        while len(pending_lines) >= size:
            yield pending_lines[:size], {name: values[:size] for name, values in pending.items()}
            pending_lines = pending_lines[size:]
            pending = {name: values[size:] for name, values in pending.items()}
    if pending_lines:
        yield pending_lines, pending


def _chunk_rows(chunks: Iterator[Chunk], names: list[str]) -> Iterator[tuple[int, dict]]:
    """Rows as dicts, from chunks of columns."""
    for lines, columns in chunks:
        yield from zip(
            lines, (dict(zip(names, values)) for values in zip(*(columns[name] for name in names)))
        )


def _row_lines(blocks: Iterator[bytes]) -> tuple[np.ndarray, int] | None:
    """The numbers of the lines after the first that are not empty (a numpy array) and the length in bytes of
    the longest line; None when a line holds an odd number of quotes (a quoted cell may go on to the next
    line) or a NUL byte, a carriage return not before a newline, or more characters than a cell may have.
    Worked out block by block: what is kept is a number per row."""
    numbers = []
    longest = 0
    offset = quotes_before = 0
    previous_end = -1  # where the last newline so far is
    lines_before = 0
    last = 0  # the last byte of the block before
    for block in blocks:
        codes = np.frombuffer(block, dtype=np.uint8)
        if (codes == 0).any():
            return None
        ends = np.flatnonzero(codes == 10)
        quotes = np.flatnonzero(codes == 34)
        if (quotes_before % 2 or len(quotes)) and ((quotes_before + np.searchsorted(quotes, ends)) % 2).any():
            return None
        following = np.flatnonzero(codes == 13) + 1  # a carriage return's next byte: a newline
        if (last == 13 and codes[0] != 10) or (codes[following[following < len(codes)]] != 10).any():
            return None
        carriage_before = np.where(ends > 0, codes[np.maximum(ends - 1, 0)], last) == 13
        ends += offset
        starts = np.concatenate(([previous_end + 1], ends[:-1] + 1))
        lengths = ends - starts - carriage_before
        if len(lengths):
            longest = max(longest, int(lengths.max()))
            numbers.append(np.flatnonzero(lengths > 0) + lines_before + 1)
            previous_end = int(ends[-1])
        lines_before += len(ends)
        quotes_before += len(quotes)
        offset += len(codes)
        last = int(codes[-1])
    if last == 13 or quotes_before % 2:
        return None
    if offset > previous_end + 1:  # a last line without a newline
        longest = max(longest, offset - previous_end - 1)
        numbers.append(np.array([lines_before + 1]))
    if longest > CSV_FIELD_LIMIT:
        return None
    return (np.concatenate(numbers)[1:] if numbers else np.empty(0, dtype=np.int64)), longest


# --- spreadsheets ------------------------------------------------------------------------------------


def _is_xlsx(data: bytes) -> bool:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return "xl/workbook.xml" in archive.namelist()


def _xlsx_table(data, sheet: str) -> Table:
    """``data``: the workbook's bytes, or an open binary file."""
    from .xlsx import Workbook, WorkbookError

    try:
        archive = zipfile.ZipFile(io.BytesIO(data) if isinstance(data, bytes) else data)
        book = Workbook(limits.zip_checked(archive, "the workbook"))
    except (WorkbookError, zipfile.BadZipFile, KeyError, ValueError, expat.ExpatError) as exc:
        raise ImportFileError([RowError(0, "", f"unreadable spreadsheet ({exc})")]) from exc
    names = book.sheetnames
    if sheet and sheet not in names:
        raise ImportFileError(
            [RowError(0, "sheet", f"no sheet {sheet!r} (the sheets are: {', '.join(names)})")]
        )
    if not names:
        raise ImportFileError([RowError(0, "", "the workbook has no sheet")])
    rows = book.rows(sheet or names[0])
    try:
        _number, header = next(rows)
    except StopIteration:
        raise ImportFileError([RowError(0, "", f"the sheet {sheet or names[0]!r} is empty")]) from None
    except (*UNREADABLE, WorkbookError) as exc:
        raise unreadable(exc) from exc
    columns = [_cell_text(value) for value in header]
    while columns and not columns[-1]:
        columns.pop()

    def records():
        for number, values in rows:
            if not any(value not in (None, "") for value in values):
                continue
            yield number, {column: value for column, value in zip(columns, values) if column}

    return Table(columns, records(), "xlsx", sheets=names)


def _cell_text(value) -> str:
    return "" if value is None else str(value).strip()


# --- Parquet, Arrow and folders of splits -------------------------------------------------------------


def _parquet_table(data: bytes | Path) -> Table:
    return _parquet_files([data])


def _parquet_files(sources: list, split_names: list[str] | None = None) -> Table:
    import pyarrow.parquet as pq

    try:
        files = [
            pq.ParquetFile(io.BytesIO(source) if isinstance(source, bytes) else source) for source in sources
        ]
    except Exception as exc:  # pyarrow's ArrowInvalid and OSError for a damaged file
        raise ImportFileError([RowError(0, "", f"unreadable Parquet file ({exc})")]) from exc
    columns = _union_columns([file.schema_arrow.names for file in files], split_names)
    batches = (
        (index, batch)
        for index, file in enumerate(files)
        for batch in file.iter_batches(batch_size=ARROW_BATCH_ROWS)
    )
    return _batches_table(columns, batches, split_names, "parquet")


def _arrow_table(sources: list, split_names: list[str] | None = None) -> Table:
    """Arrow IPC files as ``datasets.save_to_disk`` writes them (the stream format; the file format too)."""
    import pyarrow as pa

    readers = []
    for source in sources:
        try:
            readers.append(pa.ipc.open_stream(source))
        except pa.ArrowInvalid:
            try:
                source.seek(0) if hasattr(source, "seek") else None
                file_reader = pa.ipc.open_file(source)
            except pa.ArrowInvalid as exc:
                raise ImportFileError([RowError(0, "", f"unreadable Arrow file ({exc})")]) from exc
            readers.append([file_reader.get_batch(i) for i in range(file_reader.num_record_batches)])
    schemas = [
        reader.schema.names if hasattr(reader, "schema") else (reader[0].schema.names if reader else [])
        for reader in readers
    ]
    columns = _union_columns(schemas, split_names)
    batches = ((index, batch) for index, reader in enumerate(readers) for batch in reader)
    return _batches_table(columns, batches, split_names, "arrow")


def _union_columns(schemas: list[list[str]], split_names: list[str] | None) -> list[str]:
    columns = list(dict.fromkeys(name for names in schemas for name in names))
    if split_names and "split" not in columns:
        columns.append("split")
    return columns


def _batches_table(columns: list[str], batches, split_names: list[str] | None, file_format: str) -> Table:
    """The table of Arrow record batches (``(split index, batch)``): rows as dicts, or chunks of columns
    straight from each batch's columns."""

    def chunks(size: int, names: list[str]) -> Iterator[Chunk]:
        def parts():
            number = 0
            for index, batch in batches:
                split = split_names[index] if split_names else None
                yield (
                    list(range(number + 1, number + batch.num_rows + 1)),
                    _batch_columns(batch, names, split),
                )
                number += batch.num_rows

        return _rechunked(parts(), size)

    return Table(columns, _batch_rows(batches, split_names), file_format, chunks=chunks)


def _batch_columns(batch, names: list[str], split: str | None) -> dict[str, list]:
    """A record batch's values of each of ``names``: its column; for a "split" it lacks, the split's name."""
    present = batch.schema.names
    if len(set(present)) < len(present):  # a name twice: its last column, as in a row's dict
        records = batch.to_pylist()
        if split is not None:
            for record in records:
                record.setdefault("split", split)
        return {name: [record.get(name) for record in records] for name in names}

    def column(name: str) -> list:
        if name in present:
            return batch.column(name).to_pylist()
        return [split if name == "split" else None] * batch.num_rows

    return {name: column(name) for name in names}


def _batch_rows(batches, split_names: list[str] | None) -> Iterator[tuple[int, dict]]:
    number = 0
    for index, batch in batches:
        for record in batch.to_pylist():
            number += 1
            if split_names and "split" not in record:
                record["split"] = split_names[index]
            yield number, record


def _folder_table(folder: Path, stack: ExitStack) -> Table:
    """A ``save_to_disk`` folder (one dataset, or a DatasetDict with a folder per split), or a folder of
    parquet / jsonl / csv files, one per split (Hugging Face's ``data/train-00000-of-00001.parquet`` too)."""
    arrow = sorted(folder.rglob("*.arrow"))
    if arrow:
        return _arrow_table(
            [pa_file for pa_file in _open_all(arrow)], [_split_name(folder, p) for p in arrow]
        )
    parquet = sorted(folder.rglob("*.parquet"))
    if parquet:
        return _parquet_files(parquet, [_split_name(folder, p) for p in parquet])
    texts = sorted(
        p for p in folder.rglob("*") if p.suffix.lower() in (".jsonl", ".ndjson", ".json", ".csv", ".tsv")
    )
    if not texts:
        raise ImportFileError([RowError(0, "", f"the folder holds no data file; use {FORMATS}")])
    # each file read as its rows are asked for, never whole
    return _concatenated(
        [(_split_name(folder, p), _open_table(None, p.name, path=p, stack=stack)) for p in texts]
    )


def _open_all(paths: list[Path]):
    import pyarrow as pa

    return [pa.memory_map(str(path)) for path in paths]


def _split_name(folder: Path, path: Path) -> str:
    """``train`` for ``train/data-00000-of-00001.arrow``, ``data/train-00000-of-00001.parquet`` or ``train.jsonl``."""
    relative = path.relative_to(folder)
    if len(relative.parts) > 1 and relative.parts[0] not in ("data", "."):
        return relative.parts[0]
    stem = path.stem
    return stem.split("-")[0] if stem.split("-")[0] not in ("data", "") else "train"


def _concatenated(parts: list[tuple[str, Table]]) -> Table:
    columns = _union_columns([table.columns for _split, table in parts], [split for split, _t in parts])
    errors: list[RowError] = []

    def rows():
        number = 0
        for split, table in parts:
            for _line, record in table.rows:
                number += 1
                record.setdefault("split", split)
                yield number, record
            errors.extend(table.errors)

    return Table(columns, rows(), parts[0][1].format, errors)


def _unzip(data: bytes, folder: Path, filename: str) -> None:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        limits.zip_checked(archive, filename)
        for member in archive.infolist():
            target = (folder / member.filename).resolve()
            if not str(target).startswith(str(folder.resolve())):
                raise _refused(filename, f"the archive names a path outside itself ({member.filename})")
        archive.extractall(folder)
