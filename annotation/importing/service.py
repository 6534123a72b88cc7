"""``questions_import``: read a file through its column mapping, run the funnel, store items and every
dropped row, in one go. The page (through its task), the command and the designs' imports call it."""

import json
import logging
import time
from collections import Counter
from collections.abc import Callable
from contextlib import ExitStack, closing
from datetime import timedelta
from functools import partial
from pathlib import Path

import numpy as np
from django.db import IntegrityError, transaction
from django.db.models import F, Min, Window
from django.db.models.functions import RowNumber
from django.utils import timezone

from core.background import import_stale_seconds
from core.db.bulk import (
    ReservedIds,
    batches,
    fast_insert,
    gc_paused,
    one_writer_at_a_time,
    wal_checkpoints_aside,
    written_aside,
)

from .. import services  # the package, not its names: annotation.services reads importing.funnel
from ..designs import design_for
from ..models import DroppedRow, ImportBatch, Item, ItemGroup, Project
from .chunks import KeyIndex, Spool, digests, id_digest
from .errors import ImportFileError, RowError
from .funnel import MIN_WORDS, length_bounds, question_digest, word_count
from .mapping import QUESTIONS, Mapping, check_values, propose, remember, remembered
from .preview import proposed, sample_rows
from .published import PublishedRowsRefused
from .read import LabelResolver, RowChecker, Rows, UnknownValues, taker
from .tables import UNREADABLE, open_table, unreadable

logger = logging.getLogger(__name__)
Stage = DroppedRow.Stage
MAX_STORED_ERRORS = 1000


class ImportRejected(Exception):
    """The file has errors and ``skip_invalid`` was not given: nothing was imported."""

    def __init__(self, batch: ImportBatch, errors: list[RowError], unknown: UnknownValues | None = None):
        self.batch = batch
        self.errors = errors
        self.unknown = unknown or UnknownValues()
        summary = self.unknown.summary()
        values = (
            (
                "values that match nothing (map them with --values FIELD:VALUE=MEANING):\n"
                + "\n".join(f"  {line}" for line in summary)
                + "\n"
            )
            if summary
            else ""
        )
        shown = "\n".join(f"  {error}" for error in errors[:20])
        more = f"\n  … and {len(errors) - 20} more" if len(errors) > 20 else ""
        super().__init__(
            f"{len(errors)} problem(s) in {batch.filename}; nothing was imported:\n{values}{shown}{more}"
        )


def questions_import(
    *,
    project: Project,
    data: bytes | None = None,
    filename: str,
    path: Path | None = None,
    user=None,
    skip_invalid: bool = False,
    mapping: Mapping | dict | None = None,
    sheet: str = "",
    as_gold: bool = False,
    length_bounds_on: bool = True,
    batch: ImportBatch | None = None,
    progress: Callable[[str], None] | None = None,
) -> ImportBatch:
    """Import source questions into ``project`` and return the batch with its funnel report.

    The file is ``data`` (its bytes) or ``path`` (a file or a folder of splits). ``mapping`` says which
    column is which field (default: proposed from the column names and the project's last mapping).
    ``as_gold``: the items are already reviewed; they are approved, each with a curation decision by
    ``user``. ``length_bounds_on=False`` keeps questions of any length.

    Raises ``ImportRejected`` (after recording the failed batch) when the file has errors and
    ``skip_invalid`` is false; then no item is written.
    """
    if isinstance(mapping, dict):
        mapping = Mapping.from_dict(mapping)
    options = {"sheet": sheet, "as_gold": as_gold, "length_bounds": length_bounds_on}
    if batch is None:
        batch = ImportBatch.objects.create(
            project=project,
            created_by=user,
            filename=filename[:255],
            skip_invalid=skip_invalid,
            options=options,
        )
    say = progress or (lambda message: None)
    say("reading")
    if _published_source(project, data, path, filename, batch):
        say("done")
        return batch
    unknown = UnknownValues()
    errors: list[RowError] = []
    with ExitStack() as stack:
        # The spool is emptied before collection resumes: its rows then are not walked by the first one.
        stack.enter_context(gc_paused())
        try:
            table = open_table(data, filename, path=path, sheet=sheet, stack=stack, every_row=True)
            if mapping is None:  # proposed from the names and the first rows' values, as on the page
                mapping = proposed(project, *sample_rows(data, filename, path=path, sheet=sheet))
                if not mapping.columns:
                    mapping = propose(table.columns, remembered(project, QUESTIONS))
            _check_request(mapping, table.columns, project, as_gold, user)
            errors = table.errors
            labels = LabelResolver(project.label_set, mapping.values.get("causal_class"))
            check = RowChecker(mapping, table.columns, labels, errors, unknown)

            def checked_rows():
                try:
                    for lines, columns in table.column_chunks(CHUNK_ROWS, check.wanted):
                        rows = _within_field_limits_into(check(lines, columns), errors)
                        yield _answered_only(rows, errors) if as_gold else rows
                except UNREADABLE as exc:
                    raise unreadable(exc) from exc

            spool_memory = _spool_memory(data, path, filename)
            scan = _Scan(spool_memory, errors, length_bounds_on, skip_invalid)
            stack.callback(scan.close)
            chunks = checked_rows()
            if table.format in READ_FIRST_FORMATS and one_writer_at_a_time():
                chunks = _read_first(chunks, stack.enter_context(closing(Spool(spool_memory))))
            # The import is done when its transaction commits; the log's copy into the database file after it is
            # left to a thread of its own (``wal_checkpoints_aside``, on SQLite).
            with wal_checkpoints_aside(every=WAL_CHECKPOINT_SECONDS, wait=False):
                _write(
                    project,
                    batch,
                    scan,
                    chunks,
                    mapping,
                    unknown,
                    table.format,
                    as_gold,
                    user,
                    say,
                    table.columns,
                )
        except ImportFileError as exc:
            _reject(batch, exc.errors, mapping)
            raise ImportRejected(batch, exc.errors) from exc
        except _Invalid:
            errors.sort(key=lambda error: error.line)
            _reject(batch, errors, mapping, unknown)
            raise ImportRejected(batch, errors, unknown) from None
    say("done")
    return batch


def _published_source(
    project, data: bytes | None, path: Path | None, filename: str, batch: ImportBatch
) -> bool:
    """Whether the project's design read the file as its authors publish it (METER's dataset.jsonl, CausalBench's
    parts, CausalityCheck's seeds and cells, ExpliCa's pairs), within ``batch``: its report becomes the batch's
    (records, items, fields kept, rows refused). The choice between the design's reader and the column mapping
    is made here, for the page's worker and the command alike. Raises ``ImportRejected`` with the rows refused."""
    design = design_for(project)
    if not design.reads_published() or (path is not None and path.is_dir()):
        return False
    raw = data if data is not None else path.read_bytes()
    # A reader that writes chunk by chunk (``chunks_commit``) marks what it writes with the batch, unseen until
    # the report's save below; if it stops, what it wrote is removed. The claim also makes the reader's "already in
    # the project" look-up and its writes one import's at a time: an import of the same file at the same moment
    # waits, then refuses its rows one by one.
    _claim_writing(project, batch)
    try:
        report = design.published_read(project=project, data=raw, filename=filename, batch=batch)
    except BaseException as exc:
        written_remove(batch)
        if not isinstance(exc, PublishedRowsRefused | ImportFileError | ValueError | IntegrityError):
            raise
        if isinstance(exc, PublishedRowsRefused):
            errors, read = exc.report.refused, exc.report.records
        elif isinstance(exc, ImportFileError):
            errors, read = exc.errors, 0
        elif isinstance(exc, IntegrityError):  # rows written meanwhile by a way in that takes no claim
            logger.warning("published import %s clashed with rows already written: %s", batch.pk, exc)
            errors, read = [RowError(0, "", PUBLISHED_CLASH)], 0
        else:  # a design's reader names the row at fault in its message
            errors, read = [RowError(0, "", str(exc))], 0
        _reject(batch, errors, None)
        batch.funnel = {**batch.funnel, "read": read, "format": "published"}
        batch.writing = False
        batch.save(update_fields=["funnel", "writing"])
        raise ImportRejected(batch, errors) from exc
    if report is None:
        written_remove(batch)
        return False
    batch.funnel = {
        "read": report.records,
        "invalid": 0,
        "imported": report.items,
        "format": "published",
        "published": report.as_dict(),
    }
    batch.status = ImportBatch.Status.DONE
    batch.finished_at = timezone.now()
    batch.writing = False  # what the reader wrote appears with its report
    batch.save(update_fields=["funnel", "status", "finished_at", "writing"])
    return True


# Groups (with their items) a design's published reader writes per transaction: each commits in a moment.
CHUNK_GROUPS = 50


def chunks_commit(things, write: Callable) -> list:
    """``write`` each piece of ``things`` (``CHUNK_GROUPS``) in a transaction of its own, and return what the
    calls gave, in order. For a design's published reader within the batch that ``questions_import`` claimed
    for writing: what it writes is marked with the batch (``import_batch``), so no door sees it until the
    import finishes, and it is removed if the import stops (``written_remove``)."""
    written = []
    for chunk in batches(things, CHUNK_GROUPS):
        with transaction.atomic():
            written.extend(write(chunk))
    return written


# What a published import says when the database refused its rows as already there (nothing was imported).
PUBLISHED_CLASH = (
    "records of this file were written into the project by another import at the same moment; nothing was "
    "imported: import it again to see which rows are already in the project"
)


# Formats whose reading costs several times the rest of their import: the XML of a spreadsheet (expat parses
# every cell's markup; ``benchmarks/import_questions.py`` measures it). On SQLite an import holds the database's write lock while it reads, which every
# other write waits for; such a file is read and checked first, outside the transaction, into a spool.
READ_FIRST_FORMATS = {"xlsx"}


def _read_first(chunks, spool: Spool):
    """``chunks`` of rows read to their end now, then given back one by one."""
    for rows in chunks:
        texts = sum(map(len, rows.question)) + sum(map(len, rows.context)) + sum(map(len, rows.answer))
        spool.append(None, rows, ROW_BYTES * len(rows) + 2 * texts)

    def given_back():
        for _head, body in spool:
            yield body()

    return given_back()


class _Invalid(Exception):
    """Rows of the file have errors and the import was not asked to skip them: its transaction is undone."""


# The log's copy into the database file, every so often while an import writes (each chunk commits on its own).
WAL_CHECKPOINT_SECONDS = 60
# Rows checked, deduplicated and spooled per chunk: memory stays flat whatever the file's size.
CHUNK_ROWS = 5_000
# Rows over the upper length bound looked up per query at the end (the rows to delete are all found first).
TAKE_BACK_ROWS = 5_000
# Rows held back for the funnel's last step (already present) and dropped rows stay in memory up to this much
# text, then go to a temporary file.
SPOOL_MEMORY_BYTES = 72_000_000
# ... for a file up to this size (a larger file spools from its first chunk): a 100,000-row CSV (15 MB) is not
# slowed down by the spool, and a 200 MB one keeps flat memory. A zipped file (XLSX, Parquet, .zip) counts
# for what it holds, about 8 times its size.
SPOOL_FILES_UP_TO_BYTES = 16_000_000
COMPRESSED_FACTOR = 8


def _spool_memory(data: bytes | None, path: Path | None, filename: str) -> int:
    if data is not None:
        size = len(data)
    elif path is not None and path.is_file():
        size = path.stat().st_size
    else:
        return 0  # a folder of splits
    if filename.lower().endswith((".xlsx", ".xlsm", ".parquet", ".zip", ".arrow", ".feather")):
        size *= COMPRESSED_FACTOR
    return SPOOL_MEMORY_BYTES if size <= SPOOL_FILES_UP_TO_BYTES else 0


ROW_BYTES = 600  # what a spooled row costs in memory besides its text (its tuple and the strings' headers)


def _write(project, batch, scan, rows, mapping, unknown, file_format, as_gold, user, say, columns=()) -> None:
    """Read the file's ``rows`` and write its items chunk by chunk, each chunk its own short transaction (the
    database inserts one chunk while the next is read and checked), then take back out the few rows over the
    upper length bound, which only the whole file gives, and write the funnel's report.

    No transaction is held across the import: a benchmark run's worker, writing its heartbeats beside it on
    SQLite, waits for one chunk at most. Until the last, short, transaction the batch is ``writing`` and its
    items are no item of the project (``Item.objects``); if the import stops, what it wrote is removed."""
    _claim_writing(project, batch)
    try:
        scan.start(project)
        say("writing")
        sources = {None: {"kind": "import", "import_batch": batch.pk}}
        write = partial(
            services.items_create_fast,
            project=project,
            import_batch_id=batch.pk,
            approved_by=user if as_gold else None,
            decision_note=f"Imported as already reviewed (import #{batch.pk}, {batch.filename})",
        )
        # On PostgreSQL a chunk is written on a second connection while the funnel makes the next one.
        with written_aside(lambda chunk: write(items=chunk)) as hand:
            for chunk in _committed_chunks(scan.items(rows, sources)):
                hand(chunk)
        if scan.errors and not scan.skip_invalid:
            raise _Invalid
        if not scan.rows and not scan.errors:
            raise ImportFileError([RowError(1, "", "the file has no rows after its header")])
        say("filtering")
        scan.errors.sort(key=lambda error: error.line)
        funnel = scan.finish(project, batch)
        funnel["format"] = file_format

        if unknown.by_field:
            funnel["unknown_values"] = unknown.as_dict()
        dropped = DroppedSample()
        fast_insert(
            DroppedRow,
            ["line", "stage", "field", "reason", "question", "external_id"],
            dropped.rows(scan.dropped()),
            constants={"batch_id": batch.pk},
            made_apart=True,
        )
        funnel["dropped"] = dropped.as_dict()
        batch.funnel = funnel
        batch.errors = [error.as_dict() for error in scan.errors[:MAX_STORED_ERRORS]]
        batch.status = ImportBatch.Status.DONE
        batch.finished_at = timezone.now()
        # Every column of the file: mapped to a field, kept with each item as metadata, or listed as ignored.
        kept = mapping.metadata_columns(list(columns))
        batch.mapping = {
            **mapping.as_dict(),
            "kept": kept,
            "ignored": [c for c in columns if c and c not in mapping.columns.values() and c not in kept],
        }
        batch.writing = False
        with transaction.atomic():  # the items, their new topics and the report appear together
            # The project's one check for all the items (they carry no database constraint to it), under its
            # lock: one deleted meanwhile leaves nothing of the import behind.
            if not Project.objects.select_for_update().filter(pk=project.pk).exists():
                raise Project.DoesNotExist(f"project {project.pk} was deleted during the import")
            scan.create_topics(project)
            batch.save(update_fields=["funnel", "errors", "status", "finished_at", "mapping", "writing"])
            remember(project, QUESTIONS, mapping.as_dict())
    except BaseException:
        written_remove(batch)
        raise


# Items written per transaction on PostgreSQL (one COPY): short enough that a reader or another import waits
# little for the project's lock, long enough that commits cost little. On SQLite each of ``fast_insert``'s
# batches (``SQLITE_BATCH_ROWS``) is a statement of its own, committed on its own.
WRITE_CHUNK_ROWS = 20_000
# How often an import waits to see whether the project's import that is writing has finished.
WRITING_POLL_SECONDS = 0.5


def _committed_chunks(items):
    """``items`` in the pieces that each commit on their own (outside any transaction: autocommit)."""
    if one_writer_at_a_time():
        yield items  # each batch's INSERT commits by itself, while the next batch is made in a second thread
        return
    yield from batches(items, WRITE_CHUNK_ROWS)


def _claim_writing(project: Project, batch: ImportBatch) -> None:
    """Make ``batch`` the project's one import that writes, once no other is (one whose worker stopped beating
    for ``import_stale_seconds()`` is not waited for): its "already in the project" check then sees every item an
    import of the same file before it wrote. What an earlier try of this batch wrote (its worker died) goes."""
    while True:
        now = timezone.now()
        with transaction.atomic():
            Project.objects.select_for_update().filter(pk=project.pk).values_list("pk").first()
            busy = (
                ImportBatch.objects.filter(
                    project=project,
                    writing=True,
                    heartbeat_at__gte=now - timedelta(seconds=import_stale_seconds()),
                )
                .exclude(pk=batch.pk)
                .exists()
            )
            if not busy:
                resumed = ImportBatch.objects.filter(pk=batch.pk, writing=True).exists()
                ImportBatch.objects.filter(pk=batch.pk).update(writing=True, heartbeat_at=now)
                break
        time.sleep(WRITING_POLL_SECONDS)
    batch.writing, batch.heartbeat_at = True, now
    if resumed:
        written_remove(batch, still_writing=True)


REMOVE_ROWS = 5_000


def written_remove(batch: ImportBatch, *, still_writing: bool = False) -> None:
    """Remove what an import that did not finish wrote (its items, their curation decisions, its groups, its
    dropped rows),
    a chunk per transaction, then let go of its writing (unless ``still_writing``): the project is as before."""
    ids = list(Item.with_unsettled.filter(import_batch_id=batch.pk).order_by().values_list("pk", flat=True))
    for start in range(0, len(ids), REMOVE_ROWS):
        Item.with_unsettled.filter(pk__in=ids[start : start + REMOVE_ROWS]).delete()
    groups = list(ItemGroup.with_unsettled.filter(import_batch_id=batch.pk).values_list("pk", flat=True))
    for start in range(0, len(groups), REMOVE_ROWS):
        ItemGroup.with_unsettled.filter(pk__in=groups[start : start + REMOVE_ROWS]).delete()
    DroppedRow.objects.filter(batch_id=batch.pk).delete()
    if not still_writing:
        ImportBatch.objects.filter(pk=batch.pk).update(writing=False)
        batch.writing = False


# Dropped rows kept one by one per reason (stage and field) where a file can repeat a reason without end: the
# rows of a reason past these are counted, not stored (50,000 copies of one row are one count, not 49,999 rows).
SAMPLED_STAGES = {Stage.DUPLICATE, Stage.ALREADY_PRESENT, Stage.INVALID}
DROPPED_SAMPLE = 1000


class DroppedSample:
    """Counts the dropped rows per reason (``stage:field``) as they pass, and lets through every row of the
    funnel's own stages but only the first ``DROPPED_SAMPLE`` of each reason of ``SAMPLED_STAGES``. Touches no
    database (on SQLite it runs in the insert's second thread)."""

    def __init__(self):
        self.counts: Counter = Counter()

    def rows(self, dropped):
        for row in dropped:
            reason = f"{row[1]}:{row[2]}"
            self.counts[reason] += 1
            if row[1] not in SAMPLED_STAGES or self.counts[reason] <= DROPPED_SAMPLE:
                yield row

    def as_dict(self) -> dict:
        """{"by_reason": {"stage:field": rows}, "not_stored": rows counted past the sample, "sample": its size}."""
        not_stored = sum(
            count - DROPPED_SAMPLE
            for reason, count in self.counts.items()
            if reason.partition(":")[0] in SAMPLED_STAGES and count > DROPPED_SAMPLE
        )
        return {
            "by_reason": dict(sorted(self.counts.items())),
            "not_stored": not_stored,
            "sample": DROPPED_SAMPLE,
        }


def _check_request(mapping: Mapping, columns: list[str], project: Project, as_gold: bool, user) -> None:
    problems = mapping.check(columns) + check_values(mapping.values, list(project.label_set))
    if as_gold and user is None:
        problems.append("importing as gold records a curation decision: name the user who reviewed the items")
    if problems:
        raise ImportFileError([RowError(0, "mapping", problem) for problem in problems])


def _answered_only(rows: Rows, errors: list[RowError]) -> Rows:
    unanswered = [index for index, answer in enumerate(rows.answer) if not answer]
    for index in unanswered:
        errors.append(
            RowError(rows.line[index], "answer", "is empty; an item imported as reviewed needs its answer")
        )
    return rows.take([index for index, answer in enumerate(rows.answer) if answer]) if unanswered else rows


# The most a field of one row may hold, whatever the format (a 28 MB context made a 27 MB item page).
FIELD_LIMITS = {
    "question": 2_000,
    "context": 100_000,
    "answer": 20_000,
    "source": 300,
    "topic": 200,
    "external_id": 200,
    "metadata": 100_000,
}
TEXT_LIMITS = {name: limit for name, limit in FIELD_LIMITS.items() if name != "metadata"}


def _within_field_limits_into(rows: Rows, errors: list[RowError]) -> Rows:
    """Rows with a field over its limit, or with a NUL character, become errors (appended to ``errors``)
    naming the line, the field and both sizes; the other rows are returned.

    Most columns are well within their limit and hold no NUL: that is checked for the whole column first."""
    suspects: set[int] = set()
    for name, limit in TEXT_LIMITS.items():
        values = getattr(rows, name)
        if max(map(len, values), default=0) > limit or "\x00" in "".join(values):
            suspects.update(
                index for index, value in enumerate(values) if len(value) > limit or "\x00" in value
            )
    suspects.update(
        index
        for index, metadata in enumerate(rows.metadata)
        if metadata and len(json.dumps(metadata, ensure_ascii=False)) > FIELD_LIMITS["metadata"]
    )
    if not suspects:
        return rows
    for index in sorted(suspects):
        sizes = {name: len(getattr(rows, name)[index]) for name in TEXT_LIMITS}
        metadata = rows.metadata[index]
        sizes["metadata"] = len(json.dumps(metadata, ensure_ascii=False)) if metadata else 0
        over = [name for name, size in sizes.items() if size > FIELD_LIMITS[name]]
        # PostgreSQL cannot store a NUL character in text; no spreadsheet means one either.
        nul = [name for name in TEXT_LIMITS if "\x00" in getattr(rows, name)[index]]
        line = rows.line[index]
        errors.extend(
            RowError(line, name, f"{sizes[name]:,} characters (at most {FIELD_LIMITS[name]:,})")
            for name in over
        )
        errors.extend(RowError(line, name, "contains a NUL byte") for name in nul)
    return rows.take([index for index in range(len(rows)) if index not in suspects])


# What the scan keeps of a unique row until the import writes it: the item's content as the file gives it.
# ``services.items_create_fast`` decides the rest (status, round, the answer's author) by the lifecycle's rule.
ROW_FIELDS = (
    "question",
    "context",
    "causal_class",
    "source",
    "external_id",
    "text_key",
    "answer",
    "answer_model",
    "metadata",
)


def _new_item(values: tuple, topic_id: int | None, sources: dict) -> "services.NewItem":
    # An item with a reference answer is ready for review (or approved when it comes in reviewed); one
    # without waits for an answer. ``sources``: where answers came from, by the model the file names (None:
    # a person), one dict for all the rows of each.
    question, context, causal_class, source, external_id, key, answer, model, metadata = values
    return services.NewItem(
        question=question,
        context=context,
        causal_class=causal_class,
        topic_id=topic_id,
        source=source,
        external_id=external_id,
        text_key=key,
        reference_answer=answer,
        author=services.A_MODEL if answer and model is not None else services.NOBODY,
        answer_provenance=_answer_source(sources, model) if answer else None,
        metadata=metadata,
        # a question the file says a model generated carries ``generation`` (read.RowChecker._origins)
        origin=Item.Origin.GENERATED if metadata and "generation" in metadata else Item.Origin.NATURAL,
    )


def _answer_source(sources: dict, model: str | None) -> dict:
    if model not in sources:
        sources[model] = {**sources[None], "model": model}
    return sources[model]


class _Scan:
    """The funnel, chunk by chunk as the file is read: not causal, duplicates within the file (across chunks
    too), too short, already in the project. The rows left are written at once (``items``); those held back
    as already present wait in a spool for the one step that needs the whole file, the upper length bound
    (Q3 + 1.5·IQR of the unique rows' word counts), which ``finish`` applies to them and to the rows written.

    Until the first error, unless ``skip_invalid``: a file with errors is rejected whole, so once one is found
    the rest is only checked (for the report), and nothing more is written."""

    def __init__(self, spool_memory: int, errors: list[RowError], bounded: bool, skip_invalid: bool):
        self.errors = errors
        self.bounded = bounded
        self.skip_invalid = skip_invalid
        self.rows = 0
        self.causal = 0
        self.unique = 0
        self.seen_text = KeyIndex(np.int32)
        self.seen_id = KeyIndex(np.int32)
        # Of every unique row, in the file's order: its word count (the length bounds' sample), its line, and
        # whether it was written (not too short, not already present): 9 bytes a row. The rows written over the
        # upper bound are found from these at the end, as the n-th items of the batch (ids follow the file).
        self.unique_rows: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        # Of the rows written: how many of each class (in order of the first row written) and of each topic
        # (None: no topic); the line of each class's first row, to notice when that row is taken back.
        self.class_counts: dict[str, int] = {}
        self.class_first: dict[str, int] = {}
        self.topic_counts: Counter = Counter()
        # Already present: (word counts, item found by id, by text) of a chunk's rows, and the rows (line,
        # question, id).
        self.held = Spool(spool_memory)
        self.early_dropped = Spool(spool_memory)
        self.too_long: list[tuple] = []
        self.bounds = None
        self.new_topic_ids: ReservedIds | None = None

    def start(self, project: Project) -> None:
        """Under the project's lock: its items' keys and its topics."""
        self.existing_text, self.existing_id = _existing_keys(project)
        self.topic_ids = dict(project.topics.values_list("label", "id"))
        self.known_topics = set(self.topic_ids.values())
        self.new_topic_ids = ReservedIds(project.topics.model)

    def items(self, chunks, sources: dict):
        """The items to write (``services.NewItem``), in the file's order, as ``chunks`` of rows are read.
        Touches no database (``ReservedIds`` keeps its own connection): on SQLite it runs in the thread that
        makes the insert's rows."""
        for rows in chunks:
            if self.errors and not self.skip_invalid:
                continue
            yield from self.add(rows, sources)

    def add(self, rows: Rows, sources: dict) -> list:
        self.rows += len(rows)
        lines, questions, ids = rows.line, rows.question, rows.external_id
        dropped = [
            (lines[index], Stage.NOT_CAUSAL, "is_causal", "is_causal is false", questions[index], ids[index])
            for index, causal in enumerate(rows.is_causal)
            if causal is False
        ]
        if dropped:
            rows = rows.take([index for index, causal in enumerate(rows.is_causal) if causal is not False])
            lines, questions, ids = rows.line, rows.question, rows.external_id
        self.causal += len(rows)
        text_digests = [question_digest(question) for question in questions]
        id_digests = [id_digest(external_id) if external_id else b"" for external_id in ids]
        earlier_text = self.seen_text.lookup(digests(text_digests)).tolist()
        earlier_id = self.seen_id.lookup(digests(id_digests)).tolist()
        # A row is dropped when an earlier row kept has its text, or else its id; the rows kept, in order.
        local_text: dict[bytes, int] = {}
        local_id: dict[bytes, int] = {}
        unique = []
        for index, (text_digest, id_key, first_text, first_id) in enumerate(
            zip(text_digests, id_digests, earlier_text, earlier_id)
        ):
            if first_text < 0:
                first_text = local_text.get(text_digest, -1)
            if first_text >= 0:
                reason = f"same text as line {first_text}"
                dropped.append(
                    (lines[index], Stage.DUPLICATE, "question", reason, questions[index], ids[index])
                )
                continue
            if id_key:
                if first_id < 0:
                    first_id = local_id.get(id_key, -1)
                if first_id >= 0:
                    reason = f"same id as line {first_id}"
                    dropped.append(
                        (lines[index], Stage.DUPLICATE, "id", reason, questions[index], ids[index])
                    )
                    continue
                local_id[id_key] = lines[index]
            local_text[text_digest] = lines[index]
            unique.append(index)
        if local_text:
            self.seen_text.add(digests(list(local_text)), np.fromiter(local_text.values(), dtype=np.int64))
        if local_id:
            self.seen_id.add(digests(list(local_id)), np.fromiter(local_id.values(), dtype=np.int64))
        kept = rows.take(unique)
        if len(unique) < len(text_digests):
            pick = taker(unique)
            text_digests, id_digests = pick(text_digests), pick(id_digests)
        self.unique += len(kept)
        counts = np.fromiter(map(word_count, kept.question), dtype=np.int32, count=len(kept))
        written = np.zeros(len(kept), dtype=bool)
        self.unique_rows.append((counts, np.asarray(kept.line, dtype=np.int32), written))
        items = (
            self._sort(kept, counts, written, text_digests, id_digests, dropped, sources) if len(kept) else []
        )
        if dropped:
            dropped.sort(key=lambda dropped_row: dropped_row[0])
            size = ROW_BYTES * len(dropped) + 2 * sum(len(dropped_row[4]) for dropped_row in dropped)
            self.early_dropped.append(None, dropped, size)
        return items

    def _sort(
        self, kept: Rows, counts, written, text_digests, id_digests, dropped: list, sources: dict
    ) -> list:
        """The unique rows of a chunk: too short (to ``dropped``), already present (held), or to write (the
        items returned, marked in ``written``)."""
        lines = kept.line
        if self.bounded:
            short = counts < MIN_WORDS
            for index in np.flatnonzero(short).tolist():
                reason = f"{int(counts[index])} words (fewer than {MIN_WORDS})"
                dropped.append(
                    (
                        lines[index],
                        Stage.TOO_SHORT,
                        "question",
                        reason,
                        kept.question[index],
                        kept.external_id[index],
                    )
                )
        else:
            short = np.zeros(len(kept), dtype=bool)
        has_id = np.fromiter(map(bool, kept.external_id), dtype=bool, count=len(kept))
        present_id = np.where(has_id, self.existing_id.lookup(digests(id_digests)), -1)
        present_text = self.existing_text.lookup(digests(text_digests))
        present = ~short & ((present_id >= 0) | (present_text >= 0))
        if present.any():
            at = np.flatnonzero(present).tolist()
            body = [(lines[index], kept.question[index], kept.external_id[index]) for index in at]
            head = (counts[present], present_id[present], present_text[present])
            self.held.append(head, body, ROW_BYTES * len(at) + 2 * sum(len(row[1]) for row in body))
        written[:] = ~short & ~present
        write = np.flatnonzero(written).tolist()
        if len(write) < len(kept):
            kept = kept.take(write)
            text_digests = taker(write)(text_digests)
        if not len(kept):
            return []
        for label, count in Counter(kept.causal_class).items():
            if label not in self.class_counts:
                self.class_counts[label] = 0
                self.class_first[label] = kept.line[kept.causal_class.index(label)]
            self.class_counts[label] += count
        topic_ids = [self._topic_id(label) for label in kept.topic]
        self.topic_counts.update(topic_ids)
        fields = {name: getattr(kept, name) for name in ROW_FIELDS if name != "text_key"}
        fields["text_key"] = [digest.hex() for digest in text_digests]
        return [
            _new_item(values, topic_id, sources)
            for values, topic_id in zip(zip(*(fields[name] for name in ROW_FIELDS)), topic_ids)
        ]

    def _topic_id(self, label: str) -> int | None:
        if not label:
            return None
        topic_id = self.topic_ids.get(label)
        if topic_id is None:
            topic_id = self.topic_ids[label] = self.new_topic_ids.next()
        return topic_id

    def finish(self, project: Project, batch: ImportBatch) -> dict:
        """After the whole file: its length bounds; the rows written over the upper one taken back out; the
        new topics of the rows kept written; the funnel's figures."""
        counts, lines, written = (
            (np.concatenate(column) for column in zip(*self.unique_rows))
            if self.unique_rows
            else (np.empty(0, dtype=np.int32), np.empty(0, dtype=np.int32), np.empty(0, dtype=bool))
        )
        self.unique_rows = []
        bounds = self.bounds = length_bounds(counts)
        if self.bounded:
            in_length = int(((counts >= bounds.min_words) & (counts <= bounds.max_words)).sum())
            over = written & (counts > bounds.max_words)
            if over.any():
                ordinals = np.cumsum(written)[over]  # of the items written, from 1
                self._take_back(batch, ordinals, lines[over], counts[over])
        else:
            in_length = len(counts)
        self.new_topic_ids.close()
        # As a Counter over the kept rows gives them: in order of the first kept row of each class.
        classes: dict[str, int] = {}
        for label, n in self.class_counts.items():
            if n:
                classes[label or "unlabelled"] = classes.get(label or "unlabelled", 0) + n
        imported = sum(classes.values())
        return {
            "read": self.rows + len({error.line for error in self.errors}),
            "invalid": len({error.line for error in self.errors}),
            "causal": self.causal,
            "unique": self.unique,
            "in_length": in_length,
            "imported": imported,
            "already_present": in_length - imported,
            "bounds": bounds.as_dict(),
            "length_bounds": self.bounded,
            "classes": classes,
        }

    def create_topics(self, project: Project) -> None:
        """The new topics of the rows kept (with the import's last transaction)."""
        new_topics = {topic for topic, n in self.topic_counts.items() if n} - self.known_topics - {None}
        project.topics.bulk_create(
            project.topics.model(pk=topic_id, project=project, label=label)
            for label, topic_id in sorted(self.topic_ids.items())
            if topic_id in new_topics
        )

    def _take_back(self, batch: ImportBatch, ordinals, lines, counts) -> None:
        """Delete the rows written over the upper length bound, the ``ordinals``-th items of the batch (from 1,
        in the order of their ids, which follow the file), at ``lines`` with ``counts`` words; keep for the
        report their lines, word counts, questions and ids, and take them out of the counts of classes and
        topics."""
        over = dict(zip(ordinals.tolist(), zip(lines.tolist(), counts.tolist())))
        ordinals = list(over)  # increasing
        first_taken = False
        ids = []  # deleted once all are found: a deletion would renumber the items after it
        for start in range(0, len(ordinals), TAKE_BACK_ROWS):
            chunk = ordinals[start : start + TAKE_BACK_ROWS]
            numbered = (  # the batch's ids alone (its index has them), numbered
                Item.with_unsettled.filter(import_batch_id=batch.pk)
                .annotate(n=Window(RowNumber(), order_by=F("id").asc()))
                .filter(n__in=chunk)
                .values("pk")
            )
            found = Item.with_unsettled.filter(pk__in=numbered).order_by("pk")
            found = zip(
                chunk,
                found.values_list("pk", "question", "external_id", "causal_class", "topic_id"),
                strict=True,
            )
            for ordinal, (item_id, question, external_id, causal_class, topic_id) in found:
                line, words = over[ordinal]
                self.too_long.append((line, words, question, external_id))
                self.class_counts[causal_class] -= 1
                self.topic_counts[topic_id] -= 1
                first_taken = first_taken or self.class_first[causal_class] == line
                ids.append(item_id)
        for start in range(0, len(ids), TAKE_BACK_ROWS):
            Item.with_unsettled.filter(pk__in=ids[start : start + TAKE_BACK_ROWS]).delete()
        if first_taken:  # a class may now come later: ordered by their first items kept (ids follow the file)
            first_kept = dict(
                Item.with_unsettled.filter(import_batch_id=batch.pk)
                .values("causal_class")
                .annotate(first=Min("id"))
                .values_list("causal_class", "first")
            )
            self.class_counts = {
                label: self.class_counts[label]
                for label in sorted(first_kept, key=first_kept.get)
                if label in self.class_counts
            }

    def dropped(self):
        """Every dropped row (touches no database: on SQLite it runs in the insert's second thread)."""
        bound = f"more than {self.bounds.max_words:g} = Q3 + 1.5·IQR"
        for error in self.errors:
            yield (error.line, Stage.INVALID, error.field, error.reason, "", "")
        for _head, body in self.early_dropped:
            yield from body()
        for line, words, question, external_id in self.too_long:
            yield (line, Stage.TOO_LONG, "question", f"{words} words ({bound})", question, external_id)
        for (counts, present_id, present_text), body in self.held:
            for (line, question, external_id), words, by_id, by_text in zip(
                body(), counts.tolist(), present_id.tolist(), present_text.tolist()
            ):
                if self.bounded and words > self.bounds.max_words:
                    field, stage, reason = "question", Stage.TOO_LONG, f"{words} words ({bound})"
                elif by_id >= 0:
                    field, stage, reason = "id", Stage.ALREADY_PRESENT, f"same id as item #{by_id}"
                else:
                    field, stage, reason = "question", Stage.ALREADY_PRESENT, f"same text as item #{by_text}"
                yield (line, stage, field, reason, question, external_id)

    def close(self) -> None:
        self.held.close()
        self.early_dropped.close()
        if self.new_topic_ids is not None:
            self.new_topic_ids.close()


def _existing_keys(project: Project) -> tuple[KeyIndex, KeyIndex]:
    """The project's items by text key and by external id (the lowest item id of each), read in one pass."""
    text_index, id_index = KeyIndex(), KeyIndex()
    text_keys: list[bytes] = []
    text_ids: list[int] = []
    external_keys: list[bytes] = []
    external_ids: list[int] = []

    def flush():
        text_index.add_new(digests(text_keys), np.asarray(text_ids, dtype=np.int64))
        id_index.add_new(digests(external_keys), np.asarray(external_ids, dtype=np.int64))
        for pending in (text_keys, text_ids, external_keys, external_ids):
            pending.clear()

    rows = Item.objects.filter(project=project).order_by("id").values_list("id", "text_key", "external_id")
    for item_id, key, external_id in rows.iterator(chunk_size=20_000):
        try:
            digest = bytes.fromhex(key)
        except ValueError:
            digest = b""
        if len(digest) == 20:  # a key of another form matches no row of a file
            text_keys.append(digest)
            text_ids.append(item_id)
        if external_id:
            external_keys.append(id_digest(external_id))
            external_ids.append(item_id)
        if len(text_keys) >= 50_000 or len(external_keys) >= 50_000:
            flush()
    flush()
    return text_index, id_index


def _reject(
    batch: ImportBatch, errors: list[RowError], mapping: Mapping | None, unknown: UnknownValues | None = None
) -> None:
    batch.status = ImportBatch.Status.FAILED
    batch.errors = [error.as_dict() for error in errors[:MAX_STORED_ERRORS]]
    batch.funnel = {"invalid": len({error.line for error in errors})}
    if unknown and unknown.by_field:
        batch.funnel["unknown_values"] = unknown.as_dict()
    batch.mapping = mapping.as_dict() if mapping else {}
    batch.finished_at = timezone.now()
    batch.save(update_fields=["status", "errors", "funnel", "finished_at", "mapping"])
    if mapping:  # kept for the next try: the mapping step proposes it again
        remember(batch.project, QUESTIONS, mapping.as_dict())


# --- the import's life in the background (core.background) ----------------------------------------

MAX_RESUMES = 3  # a file whose import killed its worker this often fails, with a reason, instead of looping


def import_start(
    *,
    project: Project,
    user,
    upload,
    skip_invalid: bool = False,
    mapping: dict | None = None,
    options: dict | None = None,
) -> ImportBatch:
    """Store the uploaded file as a queued import (with the mapping the curator chose and the import's
    options) and (after commit) hand it to a worker."""
    with transaction.atomic():
        batch = ImportBatch.objects.create(
            project=project,
            created_by=user,
            filename=upload.name[:255],
            skip_invalid=skip_invalid,
            source_file=upload,
            heartbeat_at=timezone.now(),
            mapping=mapping or {},
            options=options or {},
        )
        # robust: with the broker down the import stays queued and the sweep sends it again later.
        transaction.on_commit(lambda: import_enqueue(batch.pk), robust=True)
    return batch


def import_enqueue(batch_id: int) -> None:
    from ..tasks import import_questions_task

    import_questions_task.delay(batch_id)


def imports_resume_stale() -> list[int]:
    """Imports whose worker died: queued again (the next try first removes what this one wrote), or failed with
    a reason after ``MAX_RESUMES`` tries (what they wrote removed); queued imports nobody picked up are sent
    again."""
    from django.conf import settings

    from core.background import work_fail_stale, work_requeue_stale

    now = timezone.now()
    stale_before = now - timedelta(seconds=import_stale_seconds())
    failed = work_fail_stale(
        ImportBatch.objects.filter(resumed__gte=MAX_RESUMES),
        stale_before=stale_before,
        statuses=(ImportBatch.Status.RUNNING, ImportBatch.Status.QUEUED),
        failed=ImportBatch.Status.FAILED,
        errors=[
            {
                "line": 0,
                "field": "",
                "reason": f"the import stopped {MAX_RESUMES} times without finishing (its worker died); "
                "upload the file again, or split it",
            }
        ],
    )
    from ..tasks import import_upload_discard

    for batch in ImportBatch.objects.filter(pk__in=failed, writing=True):
        written_remove(batch)
    for batch in ImportBatch.objects.filter(pk__in=failed).exclude(source_file=""):
        import_upload_discard(batch)  # given up on: the file is not kept
    resumed = work_requeue_stale(
        ImportBatch,
        stale_before=stale_before,
        forgotten_before=now - timedelta(seconds=settings.GENERATION_QUEUED_STALE_SECONDS),
        enqueue=import_enqueue,
        queued=ImportBatch.Status.QUEUED,
        running=ImportBatch.Status.RUNNING,
        label="import",
    )
    return failed + resumed
