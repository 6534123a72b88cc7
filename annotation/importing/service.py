"""``questions_import``: read a file through its column mapping, run the funnel, store items and every
dropped row, in one go. The page (through its task), the command and the designs' imports call it."""

import json
from collections import Counter
from collections.abc import Callable
from contextlib import ExitStack
from datetime import timedelta
from pathlib import Path

from django.db import transaction
from django.utils import timezone

from .. import services  # the package, not its names: annotation.services reads importing.funnel
from ..bulk import fast_insert
from ..models import DroppedRow, ImportBatch, Item, Project, Topic
from .errors import ImportFileError, RowError
from .funnel import length_bounds, text_key, word_count
from .mapping import Mapping, check_values, propose
from .read import LabelResolver, SourceRow, UnknownValues, read_rows
from .tables import UNREADABLE, open_table, unreadable

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
    unknown = UnknownValues()
    with ExitStack() as stack:
        try:
            table = open_table(data, filename, path=path, sheet=sheet, stack=stack)
            mapping = mapping or propose(table.columns, project.import_mapping)
            _check_request(mapping, table.columns, project, as_gold, user)
            errors = table.errors
            try:
                rows = read_rows(
                    table.rows,
                    table.columns,
                    mapping,
                    LabelResolver(project.label_set, mapping.values.get("causal_class")),
                    errors,
                    unknown,
                )
            except UNREADABLE as exc:
                raise unreadable(exc) from exc
            if not rows and not errors:
                raise ImportFileError([RowError(1, "", "the file has no rows after its header")])
        except ImportFileError as exc:
            _reject(batch, exc.errors, mapping)
            raise ImportRejected(batch, exc.errors) from exc
    rows, errors = _within_field_limits(rows, errors)
    if as_gold:
        rows = _answered_only(rows, errors)
    errors.sort(key=lambda error: error.line)
    if errors and not skip_invalid:
        _reject(batch, errors, mapping, unknown)
        raise ImportRejected(batch, errors, unknown)

    with transaction.atomic():
        # One import of a project at a time plans and writes: the "already in the project" check then sees every
        # item a concurrent import of the same file wrote (on SQLite the write lock of the transaction does it).
        Project.objects.select_for_update().filter(pk=project.pk).values_list("pk").first()
        say("filtering")
        plan = _plan(project, rows, errors, length_bounds_on)
        plan.funnel["format"] = table.format
        if unknown.by_field:
            plan.funnel["unknown_values"] = unknown.as_dict()
        say("writing")
        topic_ids = _topic_ids(project, {row.topic for row in plan.keep if row.topic})
        sources = {None: {"kind": "import", "import_batch": batch.pk}}
        services.items_create_fast(
            project=project,
            items=(_new_item(row, topic_ids, sources) for row in plan.keep),
            import_batch_id=batch.pk,
            approved_by=user if as_gold else None,
            decision_note=f"Imported as already reviewed (import #{batch.pk}, {batch.filename})",
        )
        fast_insert(
            DroppedRow,
            ["line", "stage", "field", "reason", "question", "external_id"],
            plan.dropped,
            constants={"batch_id": batch.pk},
        )
        batch.funnel = plan.funnel
        batch.errors = [error.as_dict() for error in errors[:MAX_STORED_ERRORS]]
        batch.status = ImportBatch.Status.DONE
        batch.finished_at = timezone.now()
        batch.mapping = mapping.as_dict()
        batch.save(update_fields=["funnel", "errors", "status", "finished_at", "mapping"])
        project.import_mapping = mapping.as_dict()
        project.save(update_fields=["import_mapping"])
    say("done")
    return batch


def _check_request(mapping: Mapping, columns: list[str], project: Project, as_gold: bool, user) -> None:
    problems = mapping.check(columns) + check_values(mapping.values, list(project.label_set))
    if as_gold and user is None:
        problems.append("importing as gold records a curation decision: name the user who reviewed the items")
    if problems:
        raise ImportFileError([RowError(0, "mapping", problem) for problem in problems])


def _answered_only(rows: list[SourceRow], errors: list[RowError]) -> list[SourceRow]:
    answered = []
    for row in rows:
        if row.answer:
            answered.append(row)
        else:
            errors.append(
                RowError(row.line, "answer", "is empty; an item imported as reviewed needs its answer")
            )
    return answered


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


def _within_field_limits(
    rows: list[SourceRow], errors: list[RowError]
) -> tuple[list[SourceRow], list[RowError]]:
    """Rows with a field over its limit become errors naming the line, the field and both sizes."""
    kept, errors = [], list(errors)
    for row in rows:
        sizes = {name: len(getattr(row, name) or "") for name in FIELD_LIMITS if name != "metadata"}
        sizes["metadata"] = len(json.dumps(row.metadata, ensure_ascii=False)) if row.metadata else 0
        over = [name for name, size in sizes.items() if size > FIELD_LIMITS[name]]
        # PostgreSQL cannot store a NUL character in text; no spreadsheet means one either.
        nul = [name for name in FIELD_LIMITS if name != "metadata" and "\x00" in (getattr(row, name) or "")]
        if over or nul:
            errors.extend(
                RowError(row.line, name, f"{sizes[name]:,} characters (at most {FIELD_LIMITS[name]:,})")
                for name in over
            )
            errors.extend(RowError(row.line, name, "contains a NUL byte") for name in nul)
        else:
            kept.append(row)
    errors.sort(key=lambda error: error.line)
    return kept, errors


def _new_item(row: SourceRow, topic_ids: dict[str, int], sources: dict) -> "services.NewItem":
    # An item with a reference answer is ready for review (or approved when it comes in reviewed); one
    # without waits for an answer. ``sources``: where answers came from, by the model the file names (None:
    # a person), one dict for all the rows of each.
    answered = bool(row.answer)
    return services.NewItem(
        question=row.question,
        context=row.context,
        causal_class=row.causal_class,
        topic_id=topic_ids.get(row.topic),
        source=row.source,
        external_id=row.external_id,
        text_key=row.text_key,
        reference_answer=row.answer,
        author=services.A_MODEL if answered and row.answer_model is not None else services.NOBODY,
        answer_provenance=_answer_source(sources, row.answer_model) if answered else None,
        metadata=row.metadata or None,
    )


def _answer_source(sources: dict, model: str | None) -> dict:
    if model not in sources:
        sources[model] = {**sources[None], "model": model}
    return sources[model]


class _Plan:
    def __init__(self):
        self.keep: list[SourceRow] = []
        self.dropped: list[tuple] = []
        self.funnel: dict = {}

    def drop(self, row: SourceRow, stage: str, reason: str, field: str = ""):
        self.dropped.append((row.line, stage, field, reason, row.question, row.external_id))


def _plan(project: Project, rows: list[SourceRow], errors: list[RowError], bounded: bool = True) -> _Plan:
    plan = _Plan()
    for error in errors:
        plan.dropped.append((error.line, Stage.INVALID, error.field, error.reason, "", ""))
    invalid_lines = {error.line for error in errors}

    causal = []
    for row in rows:
        if row.is_causal is False:
            plan.drop(row, Stage.NOT_CAUSAL, "is_causal is false", "is_causal")
        else:
            causal.append(row)

    unique, first_by_key, first_by_id = [], {}, {}
    for row in causal:
        row.text_key = text_key(row.question)
        if row.text_key in first_by_key:
            plan.drop(row, Stage.DUPLICATE, f"same text as line {first_by_key[row.text_key]}", "question")
        elif row.external_id and row.external_id in first_by_id:
            plan.drop(row, Stage.DUPLICATE, f"same id as line {first_by_id[row.external_id]}", "id")
        else:
            first_by_key[row.text_key] = row.line
            if row.external_id:
                first_by_id[row.external_id] = row.line
            unique.append(row)

    counts = [word_count(row.question) for row in unique]
    bounds = length_bounds(counts)
    in_length = []
    for row, words in zip(unique, counts):
        if not bounded:
            in_length.append(row)
        elif words < bounds.min_words:
            plan.drop(row, Stage.TOO_SHORT, f"{words} words (fewer than {bounds.min_words})", "question")
        elif words > bounds.max_words:
            plan.drop(
                row,
                Stage.TOO_LONG,
                f"{words} words (more than {bounds.max_words:g} = Q3 + 1.5·IQR)",
                "question",
            )
        else:
            in_length.append(row)

    existing_by_key, existing_by_id = {}, {}
    for item_id, key, external_id in Item.objects.filter(project=project).values_list(
        "id", "text_key", "external_id"
    ):
        existing_by_key.setdefault(key, item_id)
        if external_id:
            existing_by_id.setdefault(external_id, item_id)
    for row in in_length:
        if row.external_id and row.external_id in existing_by_id:
            plan.drop(row, Stage.ALREADY_PRESENT, f"same id as item #{existing_by_id[row.external_id]}", "id")
        elif row.text_key in existing_by_key:
            plan.drop(
                row, Stage.ALREADY_PRESENT, f"same text as item #{existing_by_key[row.text_key]}", "question"
            )
        else:
            plan.keep.append(row)

    plan.dropped.sort(key=lambda dropped: dropped[0])
    plan.funnel = {
        "read": len(rows) + len(invalid_lines),
        "invalid": len(invalid_lines),
        "causal": len(causal),
        "unique": len(unique),
        "in_length": len(in_length),
        "imported": len(plan.keep),
        "already_present": len(in_length) - len(plan.keep),
        "bounds": bounds.as_dict(),
        "length_bounds": bounded,
        "classes": dict(Counter(row.causal_class or "unlabelled" for row in plan.keep)),
    }
    return plan


def _topic_ids(project: Project, labels: set[str]) -> dict[str, int]:
    existing = dict(Topic.objects.filter(project=project, label__in=labels).values_list("label", "id"))
    missing = [Topic(project=project, label=label) for label in sorted(labels - existing.keys())]
    Topic.objects.bulk_create(missing)
    existing.update(Topic.objects.filter(project=project, label__in=labels).values_list("label", "id"))
    return existing


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


# --- the import's life in the background (annotation.background) ----------------------------------------

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
    """Imports whose worker died: queued again (writing is one transaction, so nothing was half-written), or
    failed with a reason after ``MAX_RESUMES`` tries; queued imports nobody picked up are sent again."""
    from django.conf import settings

    from ..background import work_fail_stale, work_requeue_stale

    now = timezone.now()
    stale_before = now - timedelta(seconds=settings.IMPORT_STALE_SECONDS)
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
