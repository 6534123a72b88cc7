"""Celery tasks of the annotation app: each takes ids, claims its row, and calls a service."""

import logging
import uuid
from pathlib import Path

from celery import shared_task
from django.conf import settings
from django.utils import timezone

from core.background import work_beating, work_claim

from .importing import ImportRejected, questions_import
from .models import ImportBatch

logger = logging.getLogger(__name__)


@shared_task(name="annotation.import_questions")
def import_questions_task(batch_id: int) -> dict:
    owner = f"import:{batch_id}:{uuid.uuid4().hex[:8]}"
    if not work_claim(
        ImportBatch,
        pk=batch_id,
        owner=owner,
        queued=ImportBatch.Status.QUEUED,
        running=ImportBatch.Status.RUNNING,
    ):
        return {"skipped": "already taken or finished"}
    batch = ImportBatch.objects.select_related("project", "created_by").get(id=batch_id)
    options = batch.options or {}
    beating = work_beating(
        ImportBatch,
        pk=batch_id,
        owner=owner,
        every=settings.IMPORT_HEARTBEAT_SECONDS,
        running=ImportBatch.Status.RUNNING,
    )
    try:
        with beating:
            questions_import(
                project=batch.project,
                # Read from the stored file as the rows are needed: a 200 MB upload is never held whole.
                **_source(batch),
                filename=batch.filename,
                user=batch.created_by,
                skip_invalid=batch.skip_invalid,
                mapping=batch.mapping or None,
                sheet=options.get("sheet", ""),
                as_gold=bool(options.get("as_gold")),
                length_bounds_on=options.get("length_bounds", True),
                batch=batch,
            )
    except ImportRejected as exc:
        logger.info("import %s rejected: %s errors", batch_id, len(exc.errors))
    except Exception:
        # The exception (SQL, paths) is for the log; the person who imported reads that it failed and where to ask.
        logger.exception("import %s failed", batch_id)
        reason = (
            f"internal error (import #{batch_id}): nothing was imported; the administrators can read the log"
        )
        ImportBatch.objects.filter(id=batch_id).update(
            status=ImportBatch.Status.FAILED,
            finished_at=timezone.now(),
            errors=[{"line": 0, "field": "", "reason": reason}],
        )
        import_upload_discard(batch)  # nothing retries a failed import: its file would stay on disk forever
        raise
    # The rows are in the database now (or the errors are): the uploaded file is not kept.
    import_upload_discard(batch)
    batch.refresh_from_db(fields=["status", "funnel"])
    return {"status": batch.status, "funnel": batch.funnel}


@shared_task(name="annotation.search_catch_up")
def search_catch_up_task(project_id: int) -> dict:
    from .search import search_catch_up

    return {"filled": search_catch_up(project_id)}


@shared_task(name="annotation.bulk_run")
def bulk_run_task(run_id: int) -> dict:
    from .item_actions import bulk_run_execute

    run = bulk_run_execute(run_id=run_id)
    return {"status": run.status, "done": run.done}


def import_upload_discard(batch: ImportBatch) -> None:
    """Delete the stored upload of an import that is over (done, rejected or failed)."""
    if batch.source_file:
        batch.source_file.delete(save=False)
    ImportBatch.objects.filter(id=batch.pk).update(source_file="")


def _source(batch: ImportBatch) -> dict:
    """The uploaded file as a path when its storage has one (the default), else its bytes."""
    try:
        return {"path": Path(batch.source_file.path)}
    except NotImplementedError:
        with batch.source_file.open("rb") as handle:
            return {"data": handle.read()}
