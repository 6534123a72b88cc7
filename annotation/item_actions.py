"""Bulk actions of the items page: what each takes of a selection, and doing it through the services.

An action never holds its own copy of a rule: deciding goes through ``services.item_close`` item by
item (the same checks as the item page), moving through ``topics.items_move_to_topic``. Other apps add
actions with ``register`` (the generation app adds "start a generation job"), so this module never
names them. ``eligible`` says which of the chosen items the action would take, for the preview.
"""

from collections.abc import Callable
from dataclasses import dataclass, field

from django import forms
from django.core.exceptions import ValidationError
from django.db.models import Exists, OuterRef, QuerySet
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext

from .models import CurationDecision, Item, Project, Topic
from .services import DecisionRefused, item_close
from .topics import items_move_to_topic

# Past this many items one request would hold the page too long; the preview says so and the curator
# runs the action again for the rest.
MAX_ITEMS_PER_ACTION = 2000


@dataclass(frozen=True)
class BulkAction:
    key: str
    label: str
    # The items of ``chosen`` the action would take.
    eligible: Callable[[Project, QuerySet[Item]], QuerySet[Item]]
    # Extra fields the confirmation asks for (a note, a topic, a model), or None.
    form: Callable[[Project, dict | None], forms.Form] | None
    # Does it; returns a sentence for the person. Raises ValidationError for bad input.
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


class TopicForm(forms.Form):
    topic = forms.ModelChoiceField(
        label=_("Move to topic"), queryset=Topic.objects.none(), required=False, empty_label=_("No topic")
    )

    def __init__(self, project, data=None):
        super().__init__(data)
        self.fields["topic"].queryset = Topic.objects.filter(project=project).order_by("label")


def _decide(decision: str):
    def perform(*, project: Project, user, items: QuerySet[Item], data: dict) -> str:
        made, refused = 0, 0
        for item in items.order_by("pk")[:MAX_ITEMS_PER_ACTION]:
            try:
                item_close(item=item, curator=user, decision=decision, note=data.get("note", ""))
            except DecisionRefused:
                refused += 1  # decided by someone else since the preview
            else:
                made += 1
        message = ngettext("%(n)s item decided.", "%(n)s items decided.", made) % {"n": made}
        if refused:
            message += " " + ngettext(
                "%(n)s was left out: it changed after the preview.",
                "%(n)s were left out: they changed after the preview.",
                refused,
            ) % {"n": refused}
        return message

    return perform


def _move(*, project: Project, user, items: QuerySet[Item], data: dict) -> str:
    ids = list(items.order_by("pk").values_list("pk", flat=True)[:MAX_ITEMS_PER_ACTION])
    moved = items_move_to_topic(project=project, item_ids=ids, topic=data.get("topic"))
    return ngettext("%(n)s item moved.", "%(n)s items moved.", moved) % {"n": moved}


def _all(project, chosen):
    return chosen


Decision = CurationDecision.Decision
register(BulkAction("approve", _("Approve"), _decidable, NoteForm, _decide(Decision.APPROVE)))
register(BulkAction("reject", _("Reject"), _decidable, NoteForm, _decide(Decision.REJECT)))
register(BulkAction("revise", _("Send to revision"), _decidable, RevisionNoteForm, _decide(Decision.REVISE)))
register(BulkAction("move", _("Move to topic"), _all, TopicForm, _move))


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


def bulk_perform(*, project: Project, user, action_key: str, chosen: QuerySet[Item], data: dict) -> str:
    """Run the action on the eligible part of ``chosen``; ``data`` is the action form's cleaned data."""
    action = ACTIONS.get(action_key)
    if action is None:
        raise ValidationError({"action": _("Choose one of the actions.")})
    return action.perform(project=project, user=user, items=action.eligible(project, chosen), data=data)
