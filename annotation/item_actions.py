"""Bulk actions of the items page: what each takes of a selection, and doing it through the services.

An action never holds its own copy of a rule: deciding goes through ``services.item_close`` item by
item (the same checks as the item page). Other apps add actions with ``register`` (the topics app adds
"move to topic", the generation app "start a generation job"), so this module never names them. ``eligible`` says which of the chosen items the action would take, for the preview.

``bulk_perform`` is the one service every door calls (the page, the API): up to ``IN_BACKGROUND_FROM`` items
it acts at once; on more it stores a ``BulkRun`` that a worker does (``bulk_run_execute``) with its progress on
the run, which the page follows, so no request holds a proxy's timeout long.
"""

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta

from django import forms
from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Exists, OuterRef, QuerySet
from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext

from core.background import work_beating, work_claim, work_fail_stale, work_owner_token

from .models import BulkRun, CurationDecision, Item, Project
from .permissions import Role, has_role
from .services import DecisionRefused, item_close

logger = logging.getLogger(__name__)

# Past this many items one action would run too long even in the background; the preview says so and the
# curator runs the action again for the rest.
MAX_ITEMS_PER_ACTION = 2000
# From this many items on an action runs in the background (deciding 300 items takes about 7 s in a request).
IN_BACKGROUND_FROM = 300


@dataclass(frozen=True)
class BulkAction:
    key: str
    label: str
    # The items of ``chosen`` the action would take.
    eligible: Callable[[Project, QuerySet[Item]], QuerySet[Item]]
    # Extra fields the confirmation asks for (a note, a topic, a model), or None.
    form: Callable[[Project, dict | None], forms.Form] | None
    # Does it; returns a sentence for the person. Raises ValidationError for bad input. Called with
    # ``project``, ``user``, ``items``, ``data`` (the form's cleaned data) and ``progress``, a callable an action
    # that works item by item may give how many it has done so far.
    perform: Callable[..., str]


ACTIONS: dict[str, BulkAction] = {}
# How many of the items an action takes its confirmation lists by name.
PREVIEW_LISTED = 20


def register(action: BulkAction) -> None:
    ACTIONS[action.key] = action


def _decidable(project: Project, chosen: QuerySet[Item]) -> QuerySet[Item]:
    decided = CurationDecision.objects.filter(item=OuterRef("pk"), round=OuterRef("round"))
    return chosen.filter(status=Item.Status.IN_REVIEW).exclude(Exists(decided))


class NoteForm(forms.Form):
    note = forms.CharField(
        label=_("Note for the record"), required=False, widget=forms.Textarea(attrs={"rows": 3})
    )

    def __init__(self, project, data=None, *, required: bool = False):
        super().__init__(data)
        self.fields["note"].required = required


class RevisionNoteForm(NoteForm):
    def __init__(self, project, data=None):
        super().__init__(project, data, required=True)
        self.fields["note"].label = _("What should be revised (the model and people read this)")


def _decide(decision: str):
    def perform(*, project: Project, user, items: QuerySet[Item], data: dict, progress=None) -> str:
        made, refused = 0, 0
        for item in items.order_by("pk")[:MAX_ITEMS_PER_ACTION]:
            try:
                item_close(item=item, curator=user, decision=decision, note=data.get("note", ""))
            except DecisionRefused:
                refused += 1  # decided by someone else since the preview
            else:
                made += 1
            if progress is not None:
                progress(made + refused)
        message = ngettext("%(n)s item decided.", "%(n)s items decided.", made) % {"n": made}
        if refused:
            message += " " + ngettext(
                "%(n)s was left out: it changed after the preview.",
                "%(n)s were left out: they changed after the preview.",
                refused,
            ) % {"n": refused}
        return message

    return perform


Decision = CurationDecision.Decision
register(BulkAction("approve", _("Approve"), _decidable, NoteForm, _decide(Decision.APPROVE)))
register(BulkAction("reject", _("Reject"), _decidable, NoteForm, _decide(Decision.REJECT)))
register(BulkAction("revise", _("Send to revision"), _decidable, RevisionNoteForm, _decide(Decision.REVISE)))


@dataclass
class Preview:
    action: BulkAction
    chosen: int
    taken: int
    capped: bool
    # The first items it takes, in number order, so the person sees which before confirming.
    sample: list[Item] = field(default_factory=list)

    @property
    def not_listed(self) -> int:
        return self.taken - len(self.sample)


def bulk_preview(*, project: Project, action_key: str, chosen: QuerySet[Item]) -> Preview:
    action = ACTIONS.get(action_key)
    if action is None:
        raise ValidationError({"action": _("Choose one of the actions.")})
    eligible = action.eligible(project, chosen)
    taken = eligible.count()
    sample = list(eligible.order_by("pk").only("pk", "question", "status")[:PREVIEW_LISTED]) if taken else []
    return Preview(
        action=action,
        chosen=chosen.count(),
        taken=taken,
        capped=taken > MAX_ITEMS_PER_ACTION,
        sample=sample,
    )


@dataclass
class BulkOutcome:
    """What ``bulk_perform`` did: the sentence of an action done at once, or the run a worker does."""

    message: str = ""
    run: BulkRun | None = None


def bulk_perform(*, project: Project, user, action_key: str, chosen: QuerySet[Item], values) -> BulkOutcome:
    """Run the action on the eligible part of ``chosen``; ``values`` is the action form's input (a dict or the
    request's data), checked here. Up to ``IN_BACKGROUND_FROM`` items it is done now; from there on a worker
    does it (``BulkOutcome.run``). Raises ValidationError (naming the form's fields) for bad input."""
    action = ACTIONS.get(action_key)
    if action is None:
        raise ValidationError({"action": _("Choose one of the actions.")})
    data = _cleaned(action, project, values)
    eligible = action.eligible(project, chosen)
    ids = list(eligible.order_by("pk").values_list("pk", flat=True)[:MAX_ITEMS_PER_ACTION])
    if len(ids) < IN_BACKGROUND_FROM:
        items = Item.objects.filter(pk__in_many=ids)
        return BulkOutcome(message=action.perform(project=project, user=user, items=items, data=data))
    fields = action.form(project).fields if action.form else {}
    with transaction.atomic():
        run = BulkRun.objects.create(
            project=project,
            created_by=user,
            action=action.key,
            item_ids=ids,
            total=len(ids),
            values={name: values.get(name, "") for name in fields},
            heartbeat_at=timezone.now(),
        )
        # robust: with the broker down the run stays queued, and the sweep fails it with a reason.
        transaction.on_commit(lambda: bulk_run_enqueue(run.pk), robust=True)
    return BulkOutcome(run=run)


def _cleaned(action: BulkAction, project: Project, values) -> dict:
    if action.form is None:
        return {}
    form = action.form(project, values)
    if not form.is_valid():
        raise ValidationError(form.errors.as_data())
    return form.cleaned_data


def bulk_run_enqueue(run_id: int) -> None:
    from .tasks import bulk_run_task

    bulk_run_task.delay(run_id)


# The worker writes how far it has come at most this often.
PROGRESS_EVERY_SECONDS = 1.0


def bulk_run_execute(*, run_id: int) -> BulkRun:
    """Claim a queued run and do its action on its items that are still eligible, beating and writing its
    progress as it goes; the run ends done with the action's sentence, or failed with a reason."""
    owner = work_owner_token()
    if not work_claim(
        BulkRun, pk=run_id, owner=owner, queued=BulkRun.Status.QUEUED, running=BulkRun.Status.RUNNING
    ):
        return BulkRun.objects.get(pk=run_id)
    run = BulkRun.objects.select_related("project", "created_by").get(pk=run_id)
    said_at = time.monotonic()

    def progress(done: int) -> None:
        nonlocal said_at
        if time.monotonic() - said_at >= PROGRESS_EVERY_SECONDS:
            BulkRun.objects.filter(pk=run_id, owner=owner).update(done=min(done, run.total))
            said_at = time.monotonic()

    try:
        action = ACTIONS.get(run.action)
        if action is None:
            raise ValidationError(_("This action no longer exists."))
        if run.created_by is None or not has_role(run.created_by, run.project, Role.CURATOR):
            raise ValidationError(_("The person who started it is no longer a curator of the project."))
        with work_beating(
            BulkRun,
            pk=run_id,
            owner=owner,
            every=settings.GENERATION_HEARTBEAT_SECONDS,
            running=BulkRun.Status.RUNNING,
        ):
            data = _cleaned(action, run.project, run.values)
            chosen = Item.objects.filter(project=run.project, pk__in_many=run.item_ids)
            message = action.perform(
                project=run.project,
                user=run.created_by,
                items=action.eligible(run.project, chosen),
                data=data,
                progress=progress,
            )
    except ValidationError as bad:
        _finish(run_id, owner, BulkRun.Status.FAILED, error="; ".join(bad.messages))
    except Exception:
        logger.exception("bulk action %s failed", run_id)
        reason = _("Internal error: the items done so far stay done; the administrators can read the log.")
        _finish(run_id, owner, BulkRun.Status.FAILED, error=str(reason))
        raise
    else:
        _finish(run_id, owner, BulkRun.Status.DONE, message=str(message), done=run.total)
    return BulkRun.objects.get(pk=run_id)


def _finish(run_id: int, owner: str, status: str, **fields) -> None:
    BulkRun.objects.filter(pk=run_id, owner=owner).update(status=status, finished_at=timezone.now(), **fields)


def bulk_runs_fail_stale() -> list[int]:
    """Fail the runs whose worker died (silent for ``GENERATION_STALE_SECONDS``) or that no worker picked up
    (``GENERATION_QUEUED_STALE_SECONDS``); the periodic sweep calls this. Items already done stay done."""
    now = timezone.now()
    reason = _(
        "The action stopped: its worker died or never picked it up. The items done so far stay done; run the "
        "action again for the rest."
    )
    failed = []
    for status, silent_for in (
        (BulkRun.Status.RUNNING, settings.GENERATION_STALE_SECONDS),
        (BulkRun.Status.QUEUED, settings.GENERATION_QUEUED_STALE_SECONDS),
    ):
        failed += work_fail_stale(
            BulkRun.objects.all(),
            stale_before=now - timedelta(seconds=silent_for),
            statuses=(status,),
            failed=BulkRun.Status.FAILED,
            error=str(reason),
        )
    return failed
