"""The topics app's bulk action on the items page: the chosen items move to one topic of the project."""

from django import forms
from django.db.models import QuerySet
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext

from annotation.item_actions import MAX_ITEMS_PER_ACTION, BulkAction, register
from annotation.models import Item, Project

from .models import Topic
from .services import items_move_to_topic


class TopicForm(forms.Form):
    topic = forms.ModelChoiceField(
        label=_("Move to topic"), queryset=Topic.objects.none(), required=False, empty_label=_("No topic")
    )

    def __init__(self, project, data=None):
        super().__init__(data)
        self.fields["topic"].queryset = Topic.objects.filter(project=project).order_by("label")


def _all(project, chosen):
    return chosen


def _move(*, project: Project, user, items: QuerySet[Item], data: dict, progress=None) -> str:
    ids = list(items.order_by("pk").values_list("pk", flat=True)[:MAX_ITEMS_PER_ACTION])
    moved = items_move_to_topic(project=project, item_ids=ids, topic=data.get("topic"))
    return ngettext("%(n)s item moved.", "%(n)s items moved.", moved) % {"n": moved}


def register_actions() -> None:
    register(BulkAction("move", _("Move to topic"), _all, TopicForm, _move))
