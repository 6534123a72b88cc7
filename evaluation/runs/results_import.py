"""An import of results from elsewhere as background work: the page, the API and ``import_run_results`` store
the files as a queued ``ResultsImport`` (``results_import_start``); a worker (or the command itself) runs
``results_import_execute``, which reads them with ``run_import_results`` and records the run made, or every
problem, as the import's report. The request never reads a table: it only stores the uploaded files."""

import logging
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.core.files.storage import default_storage
from django.db import transaction
from django.utils import timezone
from django.utils.text import get_valid_filename

from core.background import (
    import_stale_seconds,
    work_beating,
    work_claim,
    work_fail_stale,
    work_heartbeat,
    work_requeue_stale,
)

from ..models import ResultsImport
from .imported import ResultFile, ResultsRejected, run_import_results

logger = logging.getLogger(__name__)

MAX_STORED_ERRORS = 1000
MAX_RESUMES = 3  # files whose import killed its worker this often fail, with a reason, instead of looping


@dataclass
class ResultUpload:
    """One file of results as it arrives: its kind ("" to tell it by its columns) and a readable file object
    (an upload, or a file the command opened) with its name."""

    kind: str
    file: object
    name: str = ""


def results_import_start(
    *,
    project,
    release,
    name: str,
    files: list[ResultUpload],
    split: str,
    columns: str = "",
    conflicts: str = "",
    user=None,
    enqueue: bool = True,
) -> ResultsImport:
    """Store the files and queue their import into a new run of ``release``; with ``enqueue`` a worker takes it
    once the transaction commits (else the caller runs ``results_import_execute``)."""
    folder = f"results-imports/{uuid.uuid4().hex}"
    stored = []
    for upload in files:
        filename = (upload.name or getattr(upload.file, "name", "") or "results").rsplit("/", 1)[-1][:255]
        path = default_storage.save(f"{folder}/{get_valid_filename(filename) or 'results'}", upload.file)
        stored.append({"name": filename, "kind": upload.kind, "path": path})
    with transaction.atomic():
        results_import = ResultsImport.objects.create(
            project=project,
            release=release,
            split=split,
            name=name[:200],
            columns=columns,
            conflicts=conflicts,
            files=stored,
            created_by=user,
            heartbeat_at=timezone.now(),
        )
        if enqueue:
            # robust: with the broker down the import stays queued and the sweep sends it again later.
            transaction.on_commit(lambda: results_import_enqueue(results_import.pk), robust=True)
    return results_import


def results_import_enqueue(import_id: int) -> None:
    from ..tasks import import_run_results_task

    import_run_results_task.delay(import_id)


def results_import_execute(
    *, import_id: int, owner: str, enqueue_run: bool = True, progress: Callable[[str], None] | None = None
) -> ResultsImport | None:
    """Claim the queued import for ``owner`` and run it: the run it makes (its BERTScore handed to a worker when
    ``enqueue_run``) or the problems found become its report, and its files are deleted. None: another run has
    it, or it is over."""
    if not work_claim(
        ResultsImport,
        pk=import_id,
        owner=owner,
        queued=ResultsImport.Status.QUEUED,
        running=ResultsImport.Status.RUNNING,
    ):
        return None
    results_import = ResultsImport.objects.select_related("project", "release", "created_by").get(
        pk=import_id
    )

    def say(stage: str) -> None:
        work_heartbeat(
            ResultsImport, pk=import_id, owner=owner, running=ResultsImport.Status.RUNNING, stage=stage[:200]
        )
        if progress is not None:
            progress(stage)

    beating = work_beating(
        ResultsImport,
        pk=import_id,
        owner=owner,
        every=settings.IMPORT_HEARTBEAT_SECONDS,
        running=ResultsImport.Status.RUNNING,
    )
    try:
        files = [
            ResultFile(name=entry["name"], data=_read(entry["path"]), kind=entry["kind"])
            for entry in results_import.files
        ]
        with beating:
            run = run_import_results(
                project=results_import.project,
                release=results_import.release,
                name=results_import.name,
                files=files,
                split=results_import.split,
                columns=results_import.columns,
                user=results_import.created_by,
                enqueue=enqueue_run,
                conflicts=results_import.conflicts,
                progress=say,
            )
    except ResultsRejected as exc:
        _finish(
            results_import,
            status=ResultsImport.Status.FAILED,
            errors=[_error_dict(error) for error in exc.errors[:MAX_STORED_ERRORS]],
            report={"problems": len(exc.errors), "conflicting": len(exc.conflicts)},
        )
    except Exception:
        # The exception (SQL, paths) is for the log; the person who imported reads that it failed and where to ask.
        logger.exception("results import %s failed", import_id)
        reason = f"internal error (results import #{import_id}): nothing was imported; the administrators can read the log"
        _finish(
            results_import,
            status=ResultsImport.Status.FAILED,
            errors=[{"file": "", "line": 0, "field": "", "reason": reason}],
            report={"problems": 1, "conflicting": 0},
        )
        raise
    else:
        _finish(results_import, status=ResultsImport.Status.DONE, run=run, report=run.imported)
    results_import.refresh_from_db()
    return results_import


def _read(path: str) -> bytes:
    with default_storage.open(path, "rb") as handle:
        return handle.read()


def _error_dict(error) -> dict:
    return {"file": error.file, "line": error.line, "field": error.field, "reason": error.reason}


def _finish(results_import: ResultsImport, *, status: str, errors=(), report=None, run=None) -> None:
    ResultsImport.objects.filter(pk=results_import.pk).update(
        status=status,
        stage="",
        errors=list(errors),
        report=report or {},
        run=run,
        finished_at=timezone.now(),
    )
    results_import_discard_files(results_import)


def results_import_discard_files(results_import: ResultsImport) -> None:
    """The stored files of an import that is over: deleted (the run keeps each file's SHA-256)."""
    for entry in results_import.files:
        try:
            default_storage.delete(entry["path"])
        except OSError:
            logger.warning("results import %s: cannot delete %s", results_import.pk, entry["path"])
    ResultsImport.objects.filter(pk=results_import.pk).update(files=[])


def results_imports_resume_stale() -> list[int]:
    """Imports of results whose worker died: queued again (the run is stored in one transaction, so nothing was
    half-written), or failed with a reason after ``MAX_RESUMES`` tries; queued ones nobody picked up are sent
    again."""
    now = timezone.now()
    stale_before = now - timedelta(seconds=import_stale_seconds())
    reason = (
        f"the import stopped {MAX_RESUMES} times without finishing (its worker died); import the files again"
    )
    failed = work_fail_stale(
        ResultsImport.objects.filter(resumed__gte=MAX_RESUMES),
        stale_before=stale_before,
        statuses=(ResultsImport.Status.RUNNING, ResultsImport.Status.QUEUED),
        failed=ResultsImport.Status.FAILED,
        errors=[{"file": "", "line": 0, "field": "", "reason": reason}],
    )
    for results_import in ResultsImport.objects.filter(pk__in=failed):
        results_import_discard_files(results_import)
    resumed = work_requeue_stale(
        ResultsImport,
        stale_before=stale_before,
        forgotten_before=now - timedelta(seconds=settings.GENERATION_QUEUED_STALE_SECONDS),
        enqueue=results_import_enqueue,
        queued=ResultsImport.Status.QUEUED,
        running=ResultsImport.Status.RUNNING,
        label="results import",
    )
    return failed + resumed
