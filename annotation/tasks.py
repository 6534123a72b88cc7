"""Celery tasks of the annotation app: each takes ids, claims its row, and calls a service."""

import logging

from celery import shared_task

from .importing import ImportRejected, questions_import
from .models import ImportBatch

logger = logging.getLogger(__name__)


@shared_task(name="annotation.import_questions")
def import_questions_task(batch_id: int) -> dict:
    claimed = ImportBatch.objects.filter(id=batch_id, status=ImportBatch.Status.QUEUED).update(
        status=ImportBatch.Status.RUNNING
    )
    if not claimed:
        return {"skipped": "already taken or finished"}
    batch = ImportBatch.objects.select_related("project", "created_by").get(id=batch_id)
    with batch.source_file.open("rb") as handle:
        data = handle.read()
    try:
        questions_import(
            project=batch.project,
            data=data,
            filename=batch.filename,
            user=batch.created_by,
            skip_invalid=batch.skip_invalid,
            batch=batch,
        )
    except ImportRejected as exc:
        logger.info("import %s rejected: %s errors", batch_id, len(exc.errors))
    except Exception:
        # The exception (SQL, paths) is for the log; the person who imported reads that it failed and where to ask.
        logger.exception("import %s failed", batch_id)
        reason = f"internal error (import #{batch_id}): nothing was imported; the administrators can read the log"
        ImportBatch.objects.filter(id=batch_id).update(
            status=ImportBatch.Status.FAILED, errors=[{"line": 0, "field": "", "reason": reason}]
        )
        raise  # the file stays for a retry
    # The rows are in the database now (or the errors are): the uploaded file is not kept.
    batch.source_file.delete(save=False)
    ImportBatch.objects.filter(id=batch_id).update(source_file="")
    batch.refresh_from_db(fields=["status", "funnel"])
    return {"status": batch.status, "funnel": batch.funnel}
