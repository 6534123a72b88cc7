"""``questions_import``: read a file, run the funnel, store items and every dropped row, in one go."""

import json
from collections import Counter
from collections.abc import Callable

from django.db import transaction
from django.utils import timezone

from ..bulk import fast_insert
from ..models import DroppedRow, ImportBatch, Item, Project, Topic
from .funnel import length_bounds, text_key, word_count
from .read import ImportFileError, LabelResolver, RowError, SourceRow, read_source

Stage = DroppedRow.Stage
MAX_STORED_ERRORS = 1000


class ImportRejected(Exception):
    """The file has errors and ``skip_invalid`` was not given: nothing was imported."""

    def __init__(self, batch: ImportBatch, errors: list[RowError]):
        self.batch = batch
        self.errors = errors
        shown = "\n".join(f"  {error}" for error in errors[:20])
        more = f"\n  … and {len(errors) - 20} more" if len(errors) > 20 else ""
        super().__init__(f"{len(errors)} problem(s) in {batch.filename}; nothing was imported:\n{shown}{more}")


def questions_import(
    *,
    project: Project,
    data: bytes,
    filename: str,
    user=None,
    skip_invalid: bool = False,
    batch: ImportBatch | None = None,
    progress: Callable[[str], None] | None = None,
) -> ImportBatch:
    """Import source questions into ``project`` and return the batch with its funnel report.

    Raises ``ImportRejected`` (after recording the failed batch) when the file has errors
    and ``skip_invalid`` is false; then no item is written.
    """
    if batch is None:
        batch = ImportBatch.objects.create(
            project=project, created_by=user, filename=filename, skip_invalid=skip_invalid
        )
    say = progress or (lambda message: None)
    say("reading")
    try:
        rows, errors = _read(data, filename, LabelResolver(project.label_set))
    except ImportFileError as exc:
        _reject(batch, exc.errors)
        raise ImportRejected(batch, exc.errors) from exc
    rows, errors = _within_field_limits(rows, errors)
    if not rows and not errors:
        no_rows = [RowError(1, "", "the file has no rows after its header")]
        _reject(batch, no_rows)
        raise ImportRejected(batch, no_rows)
    if errors and not skip_invalid:
        _reject(batch, errors)
        raise ImportRejected(batch, errors)

    with transaction.atomic():
        # One import of a project at a time plans and writes: the "already in the project" check then sees every
        # item a concurrent import of the same file wrote (on SQLite the write lock of the transaction does it).
        Project.objects.select_for_update().filter(pk=project.pk).values_list("pk").first()
        say("filtering")
        plan = _plan(project, rows, errors)
        say("writing")
        topic_ids = _topic_ids(project, {row.topic for row in plan.keep if row.topic})
        now = timezone.now()
        fast_insert(
            Item,
            ITEM_FIELDS,
            (_item_values(row, topic_ids) for row in plan.keep),
            constants={
                "project_id": project.pk,
                "import_batch_id": batch.pk,
                "origin": Item.Origin.NATURAL,
                "position_in_group": 0,
                "version": 1,
                "created_at": now,
                "updated_at": now,
            },
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
        batch.save(update_fields=["funnel", "errors", "status", "finished_at"])
    say("done")
    return batch


UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")
MAX_JSON_DEPTH_PROBLEM = "the JSON is nested too deeply"


def _read(data: bytes, filename: str, labels: LabelResolver) -> tuple[list[SourceRow], list[RowError]]:
    """``read_source``, for files as spreadsheets save them too (UTF-16 with its byte-order mark), and with a
    message naming the line for what the readers cannot parse at all."""
    if data.startswith(UTF16_BOMS):
        try:
            data = data.decode("utf-16").encode("utf-8")
        except UnicodeDecodeError:
            raise ImportFileError([RowError(0, "", "the file starts as UTF-16 but is not valid UTF-16")]) from None
    try:
        return read_source(data, filename, labels)
    except RecursionError:
        raise ImportFileError([RowError(_too_deep_line(data), "", MAX_JSON_DEPTH_PROBLEM)]) from None


def _too_deep_line(data: bytes) -> int:
    for number, line in enumerate(data.splitlines(), start=1):
        try:
            json.loads(line)
        except RecursionError:
            return number
        except ValueError:
            continue
    return 0


# The most a field of one row may hold, whatever the format (a 28 MB context made a 27 MB item page).
FIELD_LIMITS = {"question": 2_000, "context": 100_000, "answer": 20_000, "source": 300, "topic": 200,
                "external_id": 200, "metadata": 100_000}


def _within_field_limits(rows: list[SourceRow], errors: list[RowError]) -> tuple[list[SourceRow], list[RowError]]:
    """Rows with a field over its limit become errors naming the line, the field and both sizes."""
    kept, errors = [], list(errors)
    for row in rows:
        sizes = {name: len(getattr(row, name) or "") for name in FIELD_LIMITS if name != "metadata"}
        sizes["metadata"] = len(json.dumps(row.metadata, ensure_ascii=False)) if row.metadata else 0
        over = [name for name, size in sizes.items() if size > FIELD_LIMITS[name]]
        # PostgreSQL cannot store a NUL character in text; no spreadsheet means one either.
        nul = [name for name in FIELD_LIMITS if name != "metadata" and "\x00" in (getattr(row, name) or "")]
        if over or nul:
            errors.extend(RowError(row.line, name, f"{sizes[name]:,} characters (at most {FIELD_LIMITS[name]:,})")
                          for name in over)
            errors.extend(RowError(row.line, name, "contains a NUL byte") for name in nul)
        else:
            kept.append(row)
    errors.sort(key=lambda error: error.line)
    return kept, errors


ITEM_FIELDS = [
    "question",
    "context",
    "causal_class",
    "topic_id",
    "source",
    "external_id",
    "text_key",
    "reference_answer",
    "answer_by",
    "answer_provenance",
    "status",
    "round",
    "metadata",
]


_IMPORTED_ANSWER = json.dumps({"kind": "import"})


def _item_values(row: SourceRow, topic_ids: dict[str, int]) -> tuple:
    # An item with a reference answer is ready for review (round 1); one without waits for an answer.
    has_answer = bool(row.answer)
    return (
        row.question,
        row.context,
        row.causal_class,
        topic_ids.get(row.topic),
        row.source,
        row.external_id,
        row.text_key,
        row.answer,
        Item.AnswerBy.HUMAN if has_answer else Item.AnswerBy.NOBODY,
        _IMPORTED_ANSWER if has_answer else "{}",
        Item.Status.IN_REVIEW if has_answer else Item.Status.PENDING,
        1 if has_answer else 0,
        json.dumps(row.metadata, ensure_ascii=False) if row.metadata else "{}",
    )


class _Plan:
    def __init__(self):
        self.keep: list[SourceRow] = []
        self.dropped: list[tuple] = []
        self.funnel: dict = {}

    def drop(self, row: SourceRow, stage: str, reason: str, field: str = ""):
        self.dropped.append((row.line, stage, field, reason, row.question, row.external_id))


def _plan(project: Project, rows: list[SourceRow], errors: list[RowError]) -> _Plan:
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
        if words < bounds.min_words:
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
        "classes": dict(Counter(row.causal_class or "unlabelled" for row in plan.keep)),
    }
    return plan


def _topic_ids(project: Project, labels: set[str]) -> dict[str, int]:
    existing = dict(Topic.objects.filter(project=project, label__in=labels).values_list("label", "id"))
    missing = [Topic(project=project, label=label) for label in sorted(labels - existing.keys())]
    Topic.objects.bulk_create(missing)
    existing.update(Topic.objects.filter(project=project, label__in=labels).values_list("label", "id"))
    return existing


def _reject(batch: ImportBatch, errors: list[RowError]) -> None:
    batch.status = ImportBatch.Status.FAILED
    batch.errors = [error.as_dict() for error in errors[:MAX_STORED_ERRORS]]
    batch.funnel = {"invalid": len({error.line for error in errors})}
    batch.finished_at = timezone.now()
    batch.save(update_fields=["status", "errors", "funnel", "finished_at"])
