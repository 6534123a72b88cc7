"""Exports of a release: JSONL, CSV and Parquet, one file per split, the card, the files of the project's
design (``annotation.designs``: its own field names) and ``checksums.txt`` over all of them.

Everything streams: records come from the database in chunks and go straight to the files (or
to a zip that is sent while it is written), so memory stays flat whatever the size of the release.
"""

import contextlib
import hashlib
import io
import queue
import tempfile
import threading
import zipfile
from collections.abc import Iterable, Iterator
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING

import orjson

from annotation.designs import ExportFile, design_for
from core.db.bulk import gc_paused
from core.spreadsheet import FORMULA_PREFIXES, csv_lines

from ..selectors.releases import release_split_texts
from .card import FORMATS, data_path, render_card
from .harnesses import HARNESSES, HarnessFile, HarnessUnavailable, harness_docs, harness_files
from .records import FIELDS, arrow_schema, canonical_line
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


def parse_export_formats(text: str | Iterable[str] | None) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``"jsonl,lm-eval"`` → (("jsonl",), ("lm-eval",)): the data formats and the harness tasks asked for.
    None: every data format and every harness."""
    if text is None:
        return FORMATS, tuple(HARNESSES)
    names = [
        part.strip().lower() for part in (text.split(",") if isinstance(text, str) else text) if part.strip()
    ]
    unknown = sorted(set(names) - set(FORMATS) - set(HARNESSES))
    if unknown or not names:
        raise ExportError(
            f"unknown format(s) {', '.join(unknown) or '(none given)'}; "
            f"choose from {', '.join([*FORMATS, *HARNESSES])}"
        )
    return tuple(fmt for fmt in FORMATS if fmt in names), tuple(name for name in HARNESSES if name in names)


def release_harness_files(
    release, harnesses: tuple[str, ...], *, required: bool = False
) -> list[HarnessFile]:
    """The files of the harness tasks of ``release``: none for a release no harness can ask (a rating-scale
    project's), unless ``required``, when that is an ``ExportError`` saying why."""
    if not harnesses:
        return []
    try:
        docs = harness_docs(release)  # read once for every harness asked for
    except HarnessUnavailable as exc:
        if required:
            raise ExportError(f"{', '.join(harnesses)}: {exc}") from exc
        return []
    return [harness_file for harness in harnesses for harness_file in harness_files(release, harness, docs)]


def readme_bytes(release, formats: tuple[str, ...] = FORMATS) -> bytes:
    """The card as the export writes it into README.md: rendered now, for these formats."""
    return render_card(release, release.counts, formats).encode("utf-8")


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


# core.spreadsheet.neutralise_formula, applied to whole columns at once: a cell that starts with
# one of FORMULA_PREFIXES gets a leading "'" (tests check both give the same text).
_FORMULA_START = (
    "^[" + "".join("\\" + prefix if prefix in "-\\^]" else prefix for prefix in FORMULA_PREFIXES) + "]"
)


def neutralise_column(column: "pa.Array") -> "pa.Array":
    """The column itself when no cell could start a formula (most columns of most batches): building the
    quoted copy of every cell to keep none of them was half of the CSV's neutralising time."""
    import pyarrow.compute as pc

    starts = pc.match_substring_regex(column, _FORMULA_START)
    if not pc.any(starts).as_py():
        return column
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
    release,
    out_dir: Path | str,
    formats: tuple[str, ...] = FORMATS,
    progress=None,
    harnesses: tuple[str, ...] = tuple(HARNESSES),
) -> list[Path]:
    """Write the release into ``out_dir``: data/<split>.<format>, README.md (the card), the design's files, the
    harness task folders (lm-eval/, inspect/), checksums.txt.

    One pass over each split's records feeds every format at once. Returns the files written.
    """
    out = Path(out_dir)
    if not formats:  # only harness tasks asked for: their folders alone
        return export_harnesses(release, out, harnesses)
    (out / "data").mkdir(parents=True, exist_ok=True)
    sums: dict[str, str] = {}
    readme = readme_bytes(release, formats)
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
    for harness_file in release_harness_files(release, harnesses):
        _write_harness_file(out, harness_file)
        sums[harness_file.path] = hashlib.sha256(harness_file.data).hexdigest()
    (out / "checksums.txt").write_text(_checksums_text(sums), encoding="utf-8")
    return [out / name for name in sums] + [out / "checksums.txt"]


def export_harnesses(release, out_dir: Path | str, harnesses: tuple[str, ...]) -> list[Path]:
    """Write only the folders of ``harnesses`` into ``out_dir``. Raises ``ExportError`` when the release cannot
    be asked by a harness."""
    out = Path(out_dir)
    files = release_harness_files(release, harnesses, required=True)
    return [_write_harness_file(out, harness_file) for harness_file in files]


def _write_harness_file(out: Path, harness_file: HarnessFile) -> Path:
    target = out / harness_file.path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(harness_file.data)
    return target


def harness_zip(release, harness: str) -> bytes:
    """One harness's folder as a zip (``<project>-<tag>-<harness>/...``), for the page and the API. Raises
    ``ExportError`` when the release cannot be asked by a harness."""
    root = f"{release.project.slug}-{release.tag}"
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for harness_file in release_harness_files(release, (harness,), required=True):
            archive.writestr(f"{root}/{harness_file.path}", harness_file.data)
    return buffer.getvalue()


class _Sink(io.RawIOBase):
    """Collects what the zip writer produces until it is handed on."""

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


_END = object()


class _Zipper:
    """A zip written in a thread of its own while the caller makes what goes in it.

    The caller names the entries in their order: ``whole`` (bytes known at once), ``open`` … ``write`` …
    ``close`` (bytes as they are made), ``copy`` (a spooled file, closed once copied); each entry's SHA-256 is
    kept in ``sums`` under its label. The thread compresses, computes the CRCs and hashes, in C calls that
    hold no Python lock: on the other core while the caller parses and converts the next records (for the
    100,000 records of a release, an eighth of the download's time came off it). Compressed bytes come
    back through ``ready()`` (what is there) and ``drain()`` (everything asked so far); both raise the
    thread's error. Queues of a few blocks each way keep memory flat when the client reads slowly; ``stop()``
    ends the thread whatever state it is in (a client gone mid-download)."""

    QUEUED_JOBS = 8  # a job holds a batch's JSON lines (~1.5 MB at 1,000 records) or a spooled file
    QUEUED_CHUNKS = 16  # compressed bytes, at most one COPY_BLOCK of input each

    def __init__(self):
        self.sums: dict[str, str] = {}
        self._pending: list = []  # made by the thread, taken while the caller waited to queue a job
        self._jobs: queue.Queue = queue.Queue(maxsize=self.QUEUED_JOBS)
        self._out: queue.Queue = queue.Queue(maxsize=self.QUEUED_CHUNKS)
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._run, name="release-zip", daemon=True)
        self._thread.start()

    # the caller's side

    def whole(self, name: str, label: str, data: bytes) -> None:
        self._send(("whole", name, label, data))

    def open(self, name: str, label: str) -> None:
        self._send(("open", name, label, None))

    def write(self, data: bytes) -> None:
        if data:
            self._send(("write", None, None, data))

    def close(self) -> None:
        self._send(("close", None, None, None))

    def copy(self, name: str, label: str, spool) -> None:
        self._send(("copy", name, label, spool))

    def ready(self) -> Iterator[bytes]:
        """What the thread has compressed so far, without waiting."""
        self._pending.extend(self._taken())
        yield from self._given()

    def drain(self) -> Iterator[bytes]:
        """Everything asked for so far, waiting for the thread to finish it."""
        yield from self._until_end(("mark", None, None, None))

    def finish(self) -> Iterator[bytes]:
        """The rest of the archive, its central directory last."""
        yield from self._until_end(("finish", None, None, None))
        self._thread.join()

    def _until_end(self, job: tuple) -> Iterator[bytes]:
        self._send(job)
        yield from self._given()
        while (chunk := self._checked(self._out.get())) is not _END:
            yield chunk

    def _given(self) -> Iterator[bytes]:
        pending, self._pending = self._pending, []
        for chunk in pending:
            yield self._checked(chunk)

    def stop(self) -> None:
        self._stopping.set()
        while self._thread.is_alive():
            self._taken()  # a thread waiting to hand over bytes
            with contextlib.suppress(queue.Full):
                self._jobs.put_nowait(("stop", None, None, None))  # or waiting for work
            self._thread.join(0.01)
        for kind, _name, _label, data in _emptied(self._jobs):
            if kind == "copy":  # never copied: its spooled file is closed here
                data.close()

    def _send(self, job: tuple) -> None:
        """Queue ``job``; while the queue is full, take what the thread has made (it may be waiting to hand it
        over), to be given out by the next ``ready()``."""
        while True:
            try:
                self._jobs.put(job, timeout=0.01)
                return
            except queue.Full:
                self._pending.extend(self._taken())
                if not self._thread.is_alive():
                    self._pending.extend(self._taken())
                    for chunk in self._pending:
                        self._checked(chunk)  # raises its error
                    raise RuntimeError("the zip thread stopped") from None

    def _taken(self) -> list:
        """What the thread has handed over so far."""
        return _emptied(self._out)

    @staticmethod
    def _checked(chunk):
        if isinstance(chunk, BaseException):
            raise chunk
        return chunk

    # the thread's side

    def _run(self) -> None:
        sink = _Sink()
        archive = zipfile.ZipFile(sink, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1)
        entry = digest = label = None
        try:
            while not self._stopping.is_set():
                kind, name, job_label, data = self._jobs.get()
                if kind == "stop":
                    return
                if kind == "whole":
                    archive.writestr(name, data)
                    self.sums[job_label] = hashlib.sha256(data).hexdigest()
                elif kind == "open":
                    entry, digest, label = (
                        archive.open(name, "w", force_zip64=True),
                        hashlib.sha256(),
                        job_label,
                    )
                elif kind == "write":
                    digest.update(data)
                    entry.write(data)
                elif kind == "close":
                    entry.close()
                    self.sums[label] = digest.hexdigest()
                elif kind == "copy":
                    with data:  # the spooled file, closed whatever happens
                        self._copy(archive, sink, name, job_label, data)
                elif kind == "finish":
                    archive.close()
                self._hand(sink.take())
                if kind in ("mark", "finish"):
                    self._hand(_END)
                if kind == "finish":
                    return
        except BaseException as exc:  # handed to the caller, who raises it
            self._hand(exc)
        finally:
            with contextlib.suppress(Exception):  # stopped midway: what is written is dropped with the sink
                if entry is not None and not entry.closed:
                    entry.close()
                archive.close()

    def _copy(self, archive, sink, name: str, label: str, spool) -> None:
        spool.seek(0)
        digest = hashlib.sha256()
        with archive.open(name, "w", force_zip64=True) as entry:
            while (block := spool.read(COPY_BLOCK)) and not self._stopping.is_set():
                digest.update(block)
                entry.write(block)
                self._hand(sink.take())
        self.sums[label] = digest.hexdigest()

    def _hand(self, chunk) -> None:
        if isinstance(chunk, bytes) and not chunk:
            return
        while not self._stopping.is_set():
            try:
                self._out.put(chunk, timeout=0.05)
                return
            except queue.Full:
                continue


def _emptied(waiting: queue.Queue) -> list:
    """Everything in ``waiting`` now, taken out without waiting."""
    taken = []
    with contextlib.suppress(queue.Empty):
        while True:
            taken.append(waiting.get_nowait())
    return taken


def zip_stream(release, formats: tuple[str, ...] = FORMATS, readme: bytes | None = None) -> Iterator[bytes]:
    """The export as a zip, produced while it is sent: the card first (``readme``, when the caller rendered it
    already), then each split file, the design's own files, the harness task folders, then checksums. Byte for
    byte the files ``export_release`` writes."""
    root = f"{release.project.slug}-{release.tag}"
    files = design_files(release)  # checked before the first byte is sent
    harness_entries = release_harness_files(release, tuple(HARNESSES))
    zipper = _Zipper()
    try:
        if readme is None:
            readme = readme_bytes(release, formats)
        zipper.whole(f"{root}/README.md", "README.md", readme)
        yield from zipper.drain()
        for split in SPLITS:
            yield from _zip_split(zipper, root, release, split, formats)
        for export_file in files:
            zipper.open(f"{root}/{export_file.path}", export_file.path)
            for chunk in design_file_chunks(export_file):
                zipper.write(chunk)
                yield from zipper.ready()
            zipper.close()
        for harness_file in harness_entries:
            zipper.whole(f"{root}/{harness_file.path}", harness_file.path, harness_file.data)
            yield from zipper.ready()
        yield from zipper.drain()  # every sum is known
        zipper.whole(f"{root}/checksums.txt", "checksums.txt", _checksums_text(zipper.sums).encode("utf-8"))
        yield from zipper.finish()
    finally:
        zipper.stop()


def _zip_split(zipper: _Zipper, root, release, split, formats) -> Iterator[bytes]:
    """One split in every format from one pass over its records: the first format goes straight into its zip
    entry, the others into temporary files that are copied into theirs afterwards (zip entries are written
    one after the other), while the next split is read. Reading and parsing the records once instead of once
    per format halves the time."""
    first, *others = formats
    spools, writers = {}, []
    try:
        spools = {fmt: tempfile.TemporaryFile() for fmt in others}  # noqa: SIM115 (closed by the zipper)
        name = data_path(split, first)
        zipper.open(f"{root}/{name}", name)
        writers = [WRITERS[first](_Entry(zipper)), *(WRITERS[fmt](spools[fmt]) for fmt in others)]
        for batch in _batches(release, split):
            _write(writers, batch)
            yield from zipper.ready()
        while writers:
            writers.pop(0).close()
        zipper.close()
        for fmt in others:
            name = data_path(split, fmt)
            zipper.copy(f"{root}/{name}", name, spools.pop(fmt))
            yield from zipper.ready()
    finally:  # left midway (a client gone): the writers end before their files close
        for writer in writers[1:]:
            with contextlib.suppress(Exception):
                writer.close()
        for spool in spools.values():  # not handed to the zipper
            spool.close()


class _Entry(io.RawIOBase):
    """The open zip entry of a ``_Zipper``, as a file a writer writes into."""

    def __init__(self, zipper: _Zipper):
        self.zipper = zipper

    def writable(self) -> bool:
        return True

    def write(self, data) -> int:
        self.zipper.write(bytes(data))
        return len(data)


def split_jsonl_stream(release, split: str) -> Iterator[bytes]:
    """One split as JSON lines, in the canonical form the checksum uses."""
    for batch in _batches(release, split):
        yield b"".join(batch.lines)


def _checksums_text(sums: dict[str, str]) -> str:
    return "".join(f"{digest}  {name}\n" for name, digest in sums.items())
