"""One lifecycle for background work: imports, generation jobs, topic runs, releases, benchmark runs and bulk
actions.

Each kind of work is a row with a status, an ``owner`` (the run holding it) and a ``heartbeat_at``. The same
conditional updates move every kind through its life, so no row is ever taken by two workers and none stays
"running" after its worker died:

- ``work_claim``: queued → running for one owner, in one conditional update (a duplicate delivery finds it taken);
- ``work_heartbeat``: the owner says it is alive (False: the row was taken from it or cancelled: stop);
- ``work_beating``: the owner's heartbeat from a thread of its own, for work whose steps are too long (one
  transaction, one statement, one file read) to beat in between;
- ``work_cancel``: a queued row ends at once; a running one is asked to stop, and its owner's next heartbeat
  or check sees it;
- ``work_requeue_stale``: running rows whose owner stopped beating go back to the queue (resumed), and queued
  rows nobody picked up are sent again;
- ``work_fail_stale``: for work that cannot resume, the row fails with a reason the page shows.

Stale work is swept by one periodic task (Celery beat, ``causalqa.sweep_stale``) calling the sweeps each app
registers with ``sweep_register``; nothing runs in threads inside the workers.
"""

import logging
import os
import socket
import threading
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime

from django.conf import settings
from django.db import DatabaseError, connections, models
from django.db.models import F, Q
from django.db.models.functions import Coalesce
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

logger = logging.getLogger(__name__)


class BackgroundWork(models.Model):
    """The fields every kind of background work has, under one name each (imports, generation jobs, topic
    runs, releases, benchmark runs inherit them; the services below rely on them).

    ``status`` is refined by each model (its own choices and default); ``error`` is the reason a failed
    row shows (imports keep their row errors in ``errors`` besides).
    """

    status = models.CharField(max_length=16, default="queued")
    # The run that holds the row: set when a worker claims it, checked on every heartbeat.
    owner = models.CharField(max_length=200, blank=True)
    resumed = models.PositiveIntegerField(
        default=0, help_text=_("Times the work was taken over after its worker died.")
    )
    error = models.TextField(blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True, help_text=_("Last sign of life of the work."))
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        abstract = True


class WorkProgress(models.Model):
    """How far work that counts its steps has come (generation jobs, topic runs, releases)."""

    total = models.PositiveIntegerField(default=0)
    done = models.PositiveIntegerField(default=0)

    class Meta:
        abstract = True

    @property
    def progress_percent(self) -> int:
        return min(100, int(100 * self.done / self.total)) if self.total else 0


def work_owner_token() -> str:
    """A name for the run that claims work: host, process and a random part (unique per claim)."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def work_claim(model, *, pk: int, owner: str = "", queued="queued", running="running", **also) -> bool:
    """Take a queued row for ``owner``; False if another run has it, it was cancelled or it is over."""
    now = timezone.now()
    rows = model.objects.filter(pk=pk, status=queued)
    if "cancel_requested" in _fields(model):
        rows = rows.filter(cancel_requested=False)
    started_at = Coalesce(F("started_at"), now)
    return bool(rows.update(status=running, owner=owner, started_at=started_at, heartbeat_at=now, **also))


def _fields(model) -> set[str]:
    return {field.name for field in model._meta.get_fields()}


def work_heartbeat(model, *, pk: int, owner: str, running="running", **also) -> bool:
    """The owner is alive; False when the row is no longer its own (resumed elsewhere, finished, cancelled)."""
    rows = model.objects.filter(pk=pk, status=running, owner=owner)
    if "cancel_requested" in _fields(model):
        rows = rows.filter(cancel_requested=False)
    return bool(rows.update(heartbeat_at=timezone.now(), **also))


@contextmanager
def work_beating(model, *, pk: int, owner: str, every: float, running="running") -> Iterator[None]:
    """While the block runs, beat for ``owner`` every ``every`` seconds from a thread with its own database
    connection: the sweep sees the work alive whatever it is doing (reading a large file, one long statement,
    its own long transaction, where a beat of its connection would stay invisible until the commit). The beats
    stop when the block ends, or when the row is no longer the owner's.

    On SQLite a beat waits while the work's transaction holds the one write lock; the sweep's takeover waits for
    it too, and the work is over (or gone with its process) when either gets it."""
    stop = threading.Event()

    def beat() -> None:
        try:
            while not stop.wait(every):
                try:
                    if not work_heartbeat(model, pk=pk, owner=owner, running=running):
                        return
                except DatabaseError as exc:  # a lock or a lost connection: the next beat tries again
                    logger.info("heartbeat of %s %s missed: %s", model._meta.verbose_name, pk, exc)
        finally:
            connections.close_all()  # this thread's own

    thread = threading.Thread(target=beat, name=f"heartbeat-{pk}", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


def work_cancel(model, *, pk: int, queued="queued", running="running", cancelled="cancelled") -> None:
    """Cancel a row of ``model`` (which has ``cancel_requested``): queued, it is cancelled at once and no
    claim takes it; running, it is asked to stop; finished, nothing changes."""
    model.objects.filter(pk=pk, status=queued).update(
        status=cancelled, cancel_requested=True, finished_at=timezone.now()
    )
    model.objects.filter(pk=pk, status=running).update(cancel_requested=True)


def work_requeue_stale(
    model,
    *,
    stale_before: datetime,
    forgotten_before: datetime | None,
    enqueue: Callable[[int], None],
    queued="queued",
    running="running",
    exclude: Q | None = None,
    label: str = "",
) -> list[int]:
    """Queue again every running row whose owner stopped beating before ``stale_before`` (each claim is a
    conditional update, so two sweeps never both take one), and send again the queued rows nobody picked up
    since ``forgotten_before``. Returns their ids, after handing each to ``enqueue``."""
    now = timezone.now()
    label = label or model._meta.verbose_name
    resumed = []
    stale = model.objects.filter(status=running, heartbeat_at__lt=stale_before)
    if exclude is not None:
        stale = stale.exclude(exclude)
    for pk in stale.values_list("pk", flat=True):
        if model.objects.filter(pk=pk, status=running, heartbeat_at__lt=stale_before).update(
            status=queued, owner="", heartbeat_at=now, resumed=F("resumed") + 1
        ):
            logger.warning("%s %s lost its worker; queued again", label, pk)
            resumed.append(pk)
    if forgotten_before is not None:
        forgotten = model.objects.filter(status=queued, heartbeat_at__lt=forgotten_before)
        for pk in forgotten.values_list("pk", flat=True):
            if model.objects.filter(pk=pk, status=queued, heartbeat_at__lt=forgotten_before).update(
                heartbeat_at=now
            ):
                resumed.append(pk)
    for pk in resumed:
        enqueue(pk)
    return resumed


def work_fail_stale(rows, *, stale_before: datetime, statuses, failed="failed", **reason) -> list[int]:
    """Fail the rows (a queryset) in ``statuses`` silent since ``stale_before``, setting ``reason``'s fields
    (the error the page shows). Returns their ids."""
    now = timezone.now()
    stale = rows.filter(status__in=statuses).filter(
        Q(heartbeat_at__lt=stale_before) | Q(heartbeat_at__isnull=True, created_at__lt=stale_before)
    )
    failed_ids = []
    for pk, status in stale.values_list("pk", "status"):
        if (
            rows.model.objects.filter(pk=pk, status=status)
            .filter(Q(heartbeat_at__lt=stale_before) | Q(heartbeat_at__isnull=True))
            .update(status=failed, finished_at=now, **reason)
        ):
            failed_ids.append(pk)
    return failed_ids


_SWEEPS: dict[str, Callable[[], list]] = {}


def import_stale_seconds() -> float:
    """How long a running import (of questions or of results) may stay silent before it counts as lost: a few of
    its heartbeats (``work_beating`` every ``IMPORT_HEARTBEAT_SECONDS``) missed."""
    return settings.IMPORT_HEARTBEAT_SECONDS * settings.IMPORT_MISSED_HEARTBEATS


def sweep_register(name: str, sweep: Callable[[], list]) -> None:
    """A sweep of stale work the periodic task calls (each app registers its own when it is ready)."""
    _SWEEPS[name] = sweep


def sweep_stale() -> dict[str, list]:
    """Run every registered sweep; one that fails is logged and the others still run."""
    acted = {}
    for name, sweep in _SWEEPS.items():
        try:
            ids = sweep()
        except Exception:  # noqa: BLE001 - one sweep's database hiccup must not stop the others
            logger.exception("sweep %s failed", name)
            continue
        if ids:
            logger.warning("%s: %s", name, ids)
            acted[name] = list(ids)
    return acted
