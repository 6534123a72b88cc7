"""Exports of a release: JSONL, CSV and Parquet, one file per split, the card and ``checksums.txt``.

Everything streams: records come from the database in chunks and go straight to the files (or
to a zip that is sent while it is written), so memory stays flat whatever the size of the release.
"""

import codecs
import csv
import hashlib
import io
import zipfile
from collections.abc import Iterable, Iterator
from itertools import islice
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from annotation.spreadsheet import neutralise_formula

from ..selectors.releases import release_split_records
from .card import FORMATS, data_path, render_card
from .records import ARROW_SCHEMA, FIELDS, canonical_line, csv_row
from .splits import SPLITS

BATCH = 5000


class ExportError(ValueError):
    pass


def parse_formats(text: str | Iterable[str] | None) -> tuple[str, ...]:
    """``"jsonl,csv"`` → ("jsonl", "csv"), in the order of FORMATS; unknown names are refused."""
    if text is None:
        return FORMATS
    names = [part.strip().lower() for part in (text.split(",") if isinstance(text, str) else text) if part.strip()]
    unknown = sorted(set(names) - set(FORMATS))
    if unknown or not names:
        raise ExportError(f"unknown format(s) {', '.join(unknown) or '(none given)'}; choose from {', '.join(FORMATS)}")
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


class _JsonlWriter:
    def __init__(self, fh):
        self.fh = fh

    def write(self, records: list[dict]) -> None:
        self.fh.write("".join(canonical_line(record) for record in records).encode("utf-8"))

    def close(self) -> None:
        pass


class _CsvWriter:
    """CSV with every cell neutralised against formula injection (see annotation.spreadsheet)."""

    def __init__(self, fh):
        self.text = codecs.getwriter("utf-8")(fh)
        self.writer = csv.writer(self.text)
        self.writer.writerow(FIELDS)

    def write(self, records: list[dict]) -> None:
        self.writer.writerows([neutralise_formula(value) for value in csv_row(record)] for record in records)

    def close(self) -> None:
        self.text.flush()


class _ParquetWriter:
    def __init__(self, fh):
        self.writer = pq.ParquetWriter(fh, ARROW_SCHEMA, compression="zstd")

    def write(self, records: list[dict]) -> None:
        if records:
            self.writer.write_batch(pa.RecordBatch.from_pylist(records, schema=ARROW_SCHEMA))

    def close(self) -> None:
        self.writer.close()


WRITERS = {"jsonl": _JsonlWriter, "csv": _CsvWriter, "parquet": _ParquetWriter}


def _batches(records: Iterator[dict], size: int = BATCH) -> Iterator[list[dict]]:
    while batch := list(islice(records, size)):
        yield batch


def export_release(release, out_dir: Path | str, formats: tuple[str, ...] = FORMATS, progress=None) -> list[Path]:
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
        handles = {fmt: _Hashing(open(out / data_path(split, fmt), "wb")) for fmt in formats}
        writers = {fmt: WRITERS[fmt](handle) for fmt, handle in handles.items()}
        try:
            for batch in _batches(release_split_records(release, split)):
                for writer in writers.values():
                    writer.write(batch)
                done += len(batch)
                if progress:
                    progress(done)
        finally:
            for writer in writers.values():
                writer.close()
            for handle in handles.values():
                handle.raw.close()
        sums.update({data_path(split, fmt): handle.sha256.hexdigest() for fmt, handle in handles.items()})
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
    """The export as a zip, produced while it is sent: the card first, then each split file, then checksums."""
    root = f"{release.project.slug}-{release.tag}"
    sink = _Sink()
    sums: dict[str, str] = {}
    with zipfile.ZipFile(sink, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
        readme = render_card(release, release.counts, formats).encode("utf-8")
        archive.writestr(f"{root}/README.md", readme)
        sums["README.md"] = hashlib.sha256(readme).hexdigest()
        yield sink.take()
        for split in SPLITS:
            for fmt in formats:
                name = data_path(split, fmt)
                with archive.open(f"{root}/{name}", "w", force_zip64=True) as entry:
                    handle = _Hashing(entry)
                    writer = WRITERS[fmt](handle)
                    for batch in _batches(release_split_records(release, split)):
                        writer.write(batch)
                        if sink.chunks:
                            yield sink.take()
                    writer.close()
                sums[name] = handle.sha256.hexdigest()
                yield sink.take()
        archive.writestr(f"{root}/checksums.txt", _checksums_text(sums))
    yield sink.take()


def split_jsonl_stream(release, split: str) -> Iterator[bytes]:
    """One split as JSON lines, in the canonical form the checksum uses."""
    for batch in _batches(release_split_records(release, split)):
        yield "".join(canonical_line(record) for record in batch).encode("utf-8")


def _checksums_text(sums: dict[str, str]) -> str:
    return "".join(f"{digest}  {name}\n" for name, digest in sums.items())
