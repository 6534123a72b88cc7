"""Exports of a release: JSONL, CSV and Parquet, one file per split, the card, the files of the project's
design (``annotation.designs``: its own field names) and ``checksums.txt`` over all of them.

Everything streams: records come from the database in chunks and go straight to the files (or
to a zip that is sent while it is written), so memory stays flat whatever the size of the release.
"""

import contextlib
import hashlib
import io
import tempfile
import zipfile
from collections.abc import Iterable, Iterator
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING

import orjson

from annotation.designs import ExportFile, design_for
from annotation.spreadsheet import FORMULA_PREFIXES, csv_lines

from ..selectors.releases import release_split_texts
from .card import FORMATS, data_path, render_card
from .records import FIELDS, arrow_schema, canonical_line, gc_paused
from .splits import SPLITS

if TYPE_CHECKING:
    import pyarrow as pa

# pyarrow is imported by the writers that need it (CSV, Parquet), not when the views' URLs load this module.
# Records per batch: each batch is one Parquet row group and one Arrow conversion per format.
BATCH = 1000
COPY_BLOCK = 1 << 20


class ExportError(ValueError):
    pass


def parse_formats(text: str | Iterable[str] | None) -> tuple[str, ...]:
    """``"jsonl,csv"`` → ("jsonl", "csv"), in the order of FORMATS; unknown names are refused."""
    if text is None:
        return FORMATS
    names = [
        part.strip().lower() for part in (text.split(",") if isinstance(text, str) else text) if part.strip()
    ]
    unknown = sorted(set(names) - set(FORMATS))
    if unknown or not names:
        raise ExportError(
            f"unknown format(s) {', '.join(unknown) or '(none given)'}; choose from {', '.join(FORMATS)}"
        )
    return tuple(fmt for fmt in FORMATS if fmt in names)


class _Hashing(io.RawIOBase):
    """A binary file wrapper that keeps the SHA-256 of what goes through it."""

    def __init__(self, raw):
        self.raw = raw
        self.sha256 = hashlib.sha256()

    def writable(self) -> bool:
        return True

    def write(self, data) -> int:
        self.sha256.update(data)
        return self.raw.write(data)


class Batch:
    """A run of records in split order: parsed once, and turned once into canonical lines and an Arrow batch
    that every writer shares."""

    def __init__(self, texts: list[str]):
        self.records = [orjson.loads(text) for text in texts]
        self.lines = [canonical_line(record) for record in self.records]
        self._arrow: pa.RecordBatch | None = None

    @property
    def arrow(self) -> "pa.RecordBatch":
        if self._arrow is None:
            import pyarrow as pa

            self._arrow = pa.RecordBatch.from_pylist(self.records, schema=arrow_schema())
        return self._arrow

    def __len__(self) -> int:
        return len(self.records)


class _JsonlWriter:
    def __init__(self, fh):
        self.fh = fh

    def write(self, batch: Batch) -> None:
        self.fh.write(b"".join(batch.lines))

    def close(self) -> None:
        pass


# annotation.spreadsheet.neutralise_formula, applied to whole columns at once: a cell that starts with
# one of FORMULA_PREFIXES gets a leading "'" (tests check both give the same text).
_FORMULA_START = (
    "^[" + "".join("\\" + prefix if prefix in "-\\^]" else prefix for prefix in FORMULA_PREFIXES) + "]"
)


def neutralise_column(column: "pa.Array") -> "pa.Array":
    import pyarrow.compute as pc

    starts = pc.match_substring_regex(column, _FORMULA_START)
    return pc.if_else(starts, pc.binary_join_element_wise("'", column, ""), column)


class _CsvWriter:
    """CSV with every text cell that could start a formula neutralised; options as JSON text."""

    def __init__(self, fh):
        self.fh = fh
        self.writer = None

    def write(self, batch: Batch) -> None:
        import pyarrow as pa
        import pyarrow.csv as pacsv

        columns = []
        for name, column in zip(batch.arrow.schema.names, batch.arrow.columns):
            if name == "options":
                column = pa.array(
                    [orjson.dumps(record["options"]).decode() for record in batch.records], pa.string()
                )
            if pa.types.is_string(column.type):
                column = neutralise_column(column)
            columns.append(column)
        table = pa.RecordBatch.from_arrays(columns, names=batch.arrow.schema.names)
        if self.writer is None:
            options = pacsv.WriteOptions(quoting_style="needed")
            self.writer = pacsv.CSVWriter(self.fh, table.schema, write_options=options)
        self.writer.write_batch(table)

    def close(self) -> None:
        if self.writer is None:  # an empty split still gets its header
            self.fh.write((",".join(FIELDS) + "\n").encode())
        else:
            self.writer.close()


class _ParquetWriter:
    def __init__(self, fh):
        import pyarrow.parquet as pq

        self.writer = pq.ParquetWriter(fh, arrow_schema(), compression="snappy")

    def write(self, batch: Batch) -> None:
        if len(batch):
            self.writer.write_batch(batch.arrow)

    def close(self) -> None:
        self.writer.close()


WRITERS = {"jsonl": _JsonlWriter, "csv": _CsvWriter, "parquet": _ParquetWriter}


def _batches(release, split: str, size: int = BATCH) -> Iterator[Batch]:
    texts = release_split_texts(release, split, chunk_size=size)
    while chunk := list(islice(texts, size)):
        with gc_paused():
            batch = Batch(chunk)
        yield batch


def _write(writers, batch: Batch) -> None:
    with gc_paused():  # the batch's records hold no cycles; a collection would walk all of them
        for writer in writers:
            writer.write(batch)


def design_files(release) -> list[ExportFile]:
    """The files of the project's design (METER's own field names, one file per CausalityCheck cell…), checked:
    a relative path inside the archive, not one of the common files, JSONL or CSV."""
    files = design_for(release.project).export_files(release)
    seen: set[str] = set()
    for export_file in files:
        path = export_file.path
        parts = Path(path).parts
        if not path or Path(path).is_absolute() or ".." in parts or "\\" in path:
            raise ExportError(f"design file path {path!r} must be relative and stay inside the release")
        if path in seen or path in ("README.md", "checksums.txt") or parts[0] == "data":
            raise ExportError(f"design file path {path!r} clashes with another file of the release")
        if not path.endswith((".jsonl", ".csv")):
            raise ExportError(f"design file {path!r} must end in .jsonl or .csv")
        seen.add(path)
    return files


def design_file_chunks(export_file: ExportFile) -> Iterator[bytes]:
    """A design file's bytes: canonical JSON lines, or CSV (formula-safe) with ``fields`` as its header."""
    if export_file.path.endswith(".jsonl"):
        for row in export_file.rows:
            yield canonical_line(row)
        return
    fields = export_file.fields
    rows = ([_csv_cell(row.get(name)) for name in fields] for row in export_file.rows)
    for line in csv_lines(fields, rows):
        yield line.encode("utf-8")


def _csv_cell(value):
    if isinstance(value, (dict, list)):
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()
    return value


def export_release(
    release, out_dir: Path | str, formats: tuple[str, ...] = FORMATS, progress=None
) -> list[Path]:
    """Write the release into ``out_dir``: data/<split>.<format>, README.md (the card), checksums.txt.

    One pass over each split's records feeds every format at once. Returns the files written.
    """
    out = Path(out_dir)
    (out / "data").mkdir(parents=True, exist_ok=True)
    sums: dict[str, str] = {}
    readme = render_card(release, release.counts, formats).encode("utf-8")
    (out / "README.md").write_bytes(readme)
    sums["README.md"] = hashlib.sha256(readme).hexdigest()
    done = 0
    for split in SPLITS:
        # closed in the ``finally`` below, after every format's writer has finished
        handles = {fmt: _Hashing(open(out / data_path(split, fmt), "wb")) for fmt in formats}  # noqa: SIM115
        writers = {fmt: WRITERS[fmt](handle) for fmt, handle in handles.items()}
        try:
            for batch in _batches(release, split):
                _write(writers.values(), batch)
                done += len(batch)
                if progress:
                    progress(done)
        finally:
            for writer in writers.values():
                writer.close()
            for handle in handles.values():
                handle.raw.close()
        sums.update({data_path(split, fmt): handle.sha256.hexdigest() for fmt, handle in handles.items()})
    for export_file in design_files(release):
        target = out / export_file.path
        target.parent.mkdir(parents=True, exist_ok=True)
        with open(target, "wb") as raw:
            handle = _Hashing(raw)
            for chunk in design_file_chunks(export_file):
                handle.write(chunk)
        sums[export_file.path] = handle.sha256.hexdigest()
    (out / "checksums.txt").write_text(_checksums_text(sums), encoding="utf-8")
    return [out / name for name in sums] + [out / "checksums.txt"]


class _Sink(io.RawIOBase):
    """Collects what the zip writer produces until the response generator hands it on."""

    def __init__(self):
        self.chunks: list[bytes] = []

    def writable(self) -> bool:
        return True

    def write(self, data) -> int:
        self.chunks.append(bytes(data))
        return len(data)

    def take(self) -> bytes:
        data, self.chunks = b"".join(self.chunks), []
        return data


def zip_stream(release, formats: tuple[str, ...] = FORMATS) -> Iterator[bytes]:
    """The export as a zip, produced while it is sent: the card first, then each split file, the design's own
    files, then checksums."""
    root = f"{release.project.slug}-{release.tag}"
    files = design_files(release)  # checked before the first byte is sent
    sink = _Sink()
    sums: dict[str, str] = {}
    with zipfile.ZipFile(sink, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
        readme = render_card(release, release.counts, formats).encode("utf-8")
        archive.writestr(f"{root}/README.md", readme)
        sums["README.md"] = hashlib.sha256(readme).hexdigest()
        yield sink.take()
        for split in SPLITS:
            yield from _zip_split(archive, sink, sums, root, release, split, formats)
        for export_file in files:
            with archive.open(f"{root}/{export_file.path}", "w", force_zip64=True) as entry:
                handle = _Hashing(entry)
                for chunk in design_file_chunks(export_file):
                    handle.write(chunk)
                    if sink.chunks:
                        yield sink.take()
            sums[export_file.path] = handle.sha256.hexdigest()
            yield sink.take()
        archive.writestr(f"{root}/checksums.txt", _checksums_text(sums))
    yield sink.take()


def _zip_split(archive, sink, sums, root, release, split, formats) -> Iterator[bytes]:
    """One split in every format from one pass over its records: the first format goes straight into its zip
    entry, the others into temporary files that are copied into theirs afterwards (zip entries are written
    one after the other). Reading and parsing the records once instead of once per format halves the time."""
    first, *others = formats
    with contextlib.ExitStack() as stack:
        spools = {fmt: stack.enter_context(tempfile.TemporaryFile()) for fmt in others}
        name = data_path(split, first)
        with archive.open(f"{root}/{name}", "w", force_zip64=True) as entry:
            handles = {first: _Hashing(entry), **{fmt: _Hashing(spool) for fmt, spool in spools.items()}}
            writers = [WRITERS[fmt](handle) for fmt, handle in handles.items()]
            for batch in _batches(release, split):
                _write(writers, batch)
                if sink.chunks:
                    yield sink.take()
            for writer in writers:
                writer.close()
        sums[name] = handles[first].sha256.hexdigest()
        yield sink.take()
        for fmt, spool in spools.items():
            name = data_path(split, fmt)
            spool.seek(0)
            with archive.open(f"{root}/{name}", "w", force_zip64=True) as entry:
                while block := spool.read(COPY_BLOCK):
                    entry.write(block)
                    if sink.chunks:
                        yield sink.take()
            sums[name] = handles[fmt].sha256.hexdigest()
            yield sink.take()


def split_jsonl_stream(release, split: str) -> Iterator[bytes]:
    """One split as JSON lines, in the canonical form the checksum uses."""
    for batch in _batches(release, split):
        yield b"".join(batch.lines)


def _checksums_text(sums: dict[str, str]) -> str:
    return "".join(f"{digest}  {name}\n" for name, digest in sums.items())
