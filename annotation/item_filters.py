"""The filters applied on the items page, as chips a person reads and removes one by one."""

from dataclasses import dataclass

from django.utils.http import urlencode
from django.utils.translation import gettext as _

from .item_browser import SORT_LABELS, ItemQuery
from .labels import class_label
from .models import Item


@dataclass(frozen=True)
class Chip:
    label: str  # what is filtered ("Status")
    value: str  # how, as the reader reads it ("In review")
    without: str  # the page's query string without this one filter


def _labels() -> dict[str, str]:
    return {
        "q": _("Search"),
        "status": _("Status"),
        "round": _("Round"),
        "causal_class": _("Class"),
        "topic": _("Topic"),
        "origin": _("Origin"),
        "answer_by": _("Answered by"),
        "answered_by_user": _("Answer written by"),
        "disagreement_min": _("Disagreement at least"),
        "disagreement_max": _("Disagreement at most"),
        "judgments_min": _("Judgments at least"),
        "changed_after": _("Changed on or after"),
        "changed_before": _("Changed before"),
        "metadata_key": _("Metadata key"),
        "metadata_value": _("Metadata value"),
    }


def active_filters(project, query: ItemQuery, params, topics: list[tuple[int, str]]) -> list[Chip]:
    """One chip per value of each filter in ``params`` (a QueryDict), each linking to the page without it."""
    labels = _labels()
    statuses = dict(Item.Status.choices)
    origins = dict(Item.Origin.choices)
    authors = {"human": _("A person"), "model": _("A model"), "none": _("No answer yet")}
    topic_names = {str(pk): label for pk, label in topics}
    topic_names["none"] = _("No topic")
    every = [
        (key, value) for key, values in params.lists() if key != "cursor" for value in values if value != ""
    ]
    chips = []
    for position, (key, value) in enumerate(every):
        if key not in labels:
            continue
        shown = {
            "status": lambda v: str(statuses.get(v, v)),
            "causal_class": lambda v: class_label(project, v),
            "topic": lambda v: topic_names.get(v, v),
            "origin": lambda v: str(origins.get(v, v)),
            "answer_by": lambda v: str(authors.get(v, v)),
        }.get(key, lambda v: v)(value)
        rest = [pair for index, pair in enumerate(every) if index != position]
        chips.append(Chip(label=labels[key], value=shown, without=urlencode(rest)))
    if query.sort != "id" or query.descending:
        arrow = "↓" if query.descending else "↑"
        rest = [pair for pair in every if pair[0] != "sort"]
        chips.append(
            Chip(label=_("Sort by"), value=f"{SORT_LABELS[query.sort]} {arrow}", without=urlencode(rest))
        )
    return chips
