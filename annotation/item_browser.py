"""The items page: every item of a project, filtered, searched, sorted and paged by cursor.

One query per page whatever the project's size: filters on indexed columns, full-text search
through PostgreSQL's Portuguese configuration (annotation.search) or LIKE on SQLite, and keyset
pagination (``id`` breaks ties) so page 2,000 costs what page 1 does.
"""

import base64
import binascii
import json
import math
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime

from django.db.models import F, FloatField, Q, QuerySet
from django.db.models.expressions import RawSQL
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from django.utils.translation import gettext_lazy as _

from core.db.json import json_key_condition

from .models import Item, Judgment, Project
from .search import search_condition

PAGE_SIZE = 50
MAX_PAGE_SIZE = 200

COLUMNS = {
    "question": _("Question"),
    "status": _("Status"),
    "round": _("Round"),
    "causal_class": _("Class"),
    "topic": _("Topic"),
    "origin": _("Origin"),
    "answer_by": _("Answered by"),
    "disagreement": _("Disagreement"),
    "judgments": _("Judgments"),
    "updated_at": _("Last change"),
}
DEFAULT_COLUMNS = tuple(COLUMNS)

# Disagreement as sorted: a round not yet complete (null) counts as -1. Spelled as migration 0002's index.
DISAGREEMENT_SORT_KEY = 'COALESCE("annotation_item"."round_disagreement", -1)'
# Sort key → the expression ordered by.
SORTS = {
    "id": F("id"),
    "updated_at": F("updated_at"),
    "round": F("round"),
    "disagreement": RawSQL(DISAGREEMENT_SORT_KEY, [], output_field=FloatField()),
    "judgments": F("round_judged"),
}
# Past this many matches the page says "more than"; counting all of 100,000 items costs more than the page.
COUNT_LIMIT = 10_000
SORT_LABELS = {
    "id": _("Number"),
    "updated_at": _("Last change"),
    "round": _("Round"),
    "disagreement": _("Disagreement"),
    "judgments": _("Judgments"),
}
METADATA_KEY = re.compile(r"^[\w.-]{1,64}$")
# The largest whole number a filter or a cursor may name: the database's integer columns (and ids) stop there.
LARGEST_INT = 2**31 - 1
LARGEST_ID = 2**63 - 1


class BadQuery(ValueError):
    """A filter or cursor that cannot be read; ``field`` names the part, the message says why."""

    def __init__(self, field: str, message: str):
        self.field = field
        super().__init__(message)


@dataclass
class ItemQuery:
    """What the curator asked for; every field optional. Read from a query string by ``from_params``."""

    q: str = ""
    status: list[str] = field(default_factory=list)
    round: int | None = None
    causal_class: list[str] = field(default_factory=list)
    topic: list[str] = field(default_factory=list)  # topic ids, "none" for items without one
    origin: str = ""
    answer_by: str = ""  # "human", "model", "none"
    answered_by_user: str = ""  # a username
    disagreement_min: float | None = None
    disagreement_max: float | None = None
    judgments_min: int | None = None
    changed_after: datetime | None = None
    changed_before: datetime | None = None
    metadata_key: str = ""
    metadata_value: str = ""
    sort: str = "id"
    descending: bool = False

    FILTER_PARAMS = (
        "q",
        "status",
        "round",
        "causal_class",
        "topic",
        "origin",
        "answer_by",
        "answered_by_user",
        "disagreement_min",
        "disagreement_max",
        "judgments_min",
        "changed_after",
        "changed_before",
        "metadata_key",
        "metadata_value",
        "sort",
    )

    @classmethod
    def from_params(cls, params) -> "ItemQuery":
        """From a QueryDict (GET or POST); raises BadQuery naming the first parameter that is wrong."""
        for name in (*cls.FILTER_PARAMS, "cursor", "item"):
            if any("\x00" in value for value in params.getlist(name)):
                raise BadQuery(name, _("holds a NUL character, which no text here has"))
        query = cls(
            q=params.get("q", "").strip()[:200],
            status=[value for value in params.getlist("status") if value],
            causal_class=[value for value in params.getlist("causal_class") if value],
            topic=[value for value in params.getlist("topic") if value],
            origin=params.get("origin", ""),
            answer_by=params.get("answer_by", ""),
            answered_by_user=params.get("answered_by_user", "").strip(),
            metadata_key=params.get("metadata_key", "").strip(),
            metadata_value=params.get("metadata_value", "").strip(),
        )
        unknown = set(query.status) - set(Item.Status.values)
        if unknown:
            raise BadQuery("status", _("unknown status “%(value)s”") % {"value": sorted(unknown)[0]})
        if query.origin and query.origin not in Item.Origin.values:
            raise BadQuery("origin", _("unknown origin “%(value)s”") % {"value": query.origin})
        if query.answer_by not in ("", "human", "model", "none"):
            raise BadQuery("answer_by", _("unknown author kind “%(value)s”") % {"value": query.answer_by})
        if any(value != "none" and not value.isdigit() for value in query.topic):
            raise BadQuery("topic", _("a topic is chosen by its number"))
        if query.metadata_key and not METADATA_KEY.match(query.metadata_key):
            raise BadQuery(
                "metadata_key", _("a metadata key has letters, digits, “_”, “.” or “-” (64 at most)")
            )
        query.round = _number(params, "round", int)
        query.judgments_min = _number(params, "judgments_min", int)
        query.disagreement_min = _number(params, "disagreement_min", float)
        query.disagreement_max = _number(params, "disagreement_max", float)
        query.changed_after = _date(params, "changed_after")
        query.changed_before = _date(params, "changed_before")
        sort = params.get("sort", "id") or "id"
        query.descending = sort.startswith("-")
        query.sort = sort.lstrip("-")
        if query.sort not in SORTS:
            raise BadQuery("sort", _("cannot sort by “%(value)s”") % {"value": query.sort})
        return query


def _number(params, name: str, kind):
    raw = params.get(name, "").strip()
    if not raw:
        return None
    try:
        value = kind(raw.replace(",", ".")) if kind is float else kind(raw)
    except ValueError:
        raise BadQuery(name, _("“%(value)s” is not a number") % {"value": raw[:40]}) from None
    if kind is float and not math.isfinite(value):
        raise BadQuery(name, _("“%(value)s” is not a number") % {"value": raw[:40]})
    if value < 0:
        raise BadQuery(name, _("cannot be negative"))
    if value > LARGEST_INT:
        raise BadQuery(name, _("is larger than any value an item has"))
    return value


def _date(params, name: str) -> datetime | None:
    raw = params.get(name, "").strip()
    if not raw:
        return None
    try:  # parse_datetime raises ValueError for a well-formed impossible date (February 30th)
        parsed = parse_datetime(raw) or parse_datetime(f"{raw}T00:00:00")
        if parsed is not None and timezone.is_naive(parsed):
            parsed = timezone.make_aware(parsed)
        if parsed is not None:
            parsed.astimezone(UTC)  # the database's: 9999-12-31 late evening here is year 10000 there
    except (ValueError, OverflowError):
        parsed = None
    if parsed is None:
        raise BadQuery(name, _("“%(value)s” is not a date (YYYY-MM-DD)") % {"value": raw[:40]})
    return parsed


def items_matching(project: Project, query: ItemQuery) -> QuerySet[Item]:
    """The project's items that pass every filter of ``query`` (unordered)."""
    items = Item.objects.filter(project=project)
    if query.status:
        items = items.filter(status__in=query.status)
    if query.round is not None:
        items = items.filter(round=query.round)
    if query.causal_class:
        items = items.filter(causal_class__in=query.causal_class)
    if query.topic:
        ids = [int(value) for value in query.topic if value != "none"]
        condition = Q(topic_id__in=ids)
        if "none" in query.topic:
            condition |= Q(topic__isnull=True)
        items = items.filter(condition)
    if query.origin:
        items = items.filter(origin=query.origin)
    if query.answer_by:
        items = items.filter(answer_by="" if query.answer_by == "none" else query.answer_by)
    if query.answered_by_user:
        items = items.filter(answer_author__username=query.answered_by_user)
    if query.disagreement_min is not None:
        items = items.filter(round_disagreement__gte=query.disagreement_min)
    if query.disagreement_max is not None:
        items = items.filter(round_disagreement__lte=query.disagreement_max)
    if query.judgments_min is not None:
        items = items.filter(round_judged__gte=query.judgments_min)
    if query.changed_after is not None:
        items = items.filter(updated_at__gte=query.changed_after)
    if query.changed_before is not None:
        items = items.filter(updated_at__lt=query.changed_before)
    if query.metadata_key:
        items = items.filter(metadata_condition(query.metadata_key, query.metadata_value))
    if query.q:
        items = items.filter(search_condition(project, query.q))
    return items


def metadata_condition(key: str, value: str) -> Q:
    """Items whose metadata has ``key`` (with ``value`` if given, as text or as the number it spells).

    On PostgreSQL through containment, which the metadata's partial GIN index answers."""
    return json_key_condition("metadata", key, value, non_empty_index_of="annotation_item")


@dataclass
class ItemPage:
    items: list[Item]
    next_cursor: str | None
    total: int  # at most COUNT_LIMIT + 1

    @property
    def total_is_capped(self) -> bool:
        return self.total > COUNT_LIMIT

    @property
    def count_limit(self) -> int:
        return COUNT_LIMIT


def items_page(
    queryset: QuerySet[Item], query: ItemQuery, *, cursor: str = "", limit: int = PAGE_SIZE
) -> ItemPage:
    """One page after ``cursor`` (empty: the first), in ``query``'s order, with the count of all matches."""
    limit = max(1, min(limit, MAX_PAGE_SIZE))
    total = queryset.order_by()[: COUNT_LIMIT + 1].count()
    key = SORTS[query.sort]
    ordered = queryset.annotate(sort_key=key)
    direction = "-" if query.descending else ""
    ordered = ordered.order_by(f"{direction}sort_key", f"{direction}id")
    if cursor:
        value, last_id = _cursor_decode(cursor, query.sort)
        if query.descending:
            ordered = ordered.filter(Q(sort_key__lt=value) | Q(sort_key=value, id__lt=last_id))
        else:
            ordered = ordered.filter(Q(sort_key__gt=value) | Q(sort_key=value, id__gt=last_id))
    rows = list(ordered.select_related("topic", "answer_author")[: limit + 1])
    next_cursor = _cursor_encode(rows[limit - 1], query.sort) if len(rows) > limit else None
    return ItemPage(items=rows[:limit], next_cursor=next_cursor, total=total)


def _cursor_encode(item: Item, sort: str) -> str:
    value = item.sort_key
    if isinstance(value, datetime):
        value = value.isoformat()
    raw = json.dumps([sort, value, item.pk]).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _cursor_decode(cursor: str, sort: str):
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        cursor_sort, value, last_id = json.loads(raw)
    except (binascii.Error, ValueError, TypeError):
        raise BadQuery("cursor", _("this page link is damaged; start from the first page")) from None
    if cursor_sort != sort:
        raise BadQuery("cursor", _("this page link belongs to another order; start from the first page"))
    value = _cursor_value(value, sort)
    if value is None or not _whole(last_id, LARGEST_ID):
        raise BadQuery("cursor", _("this page link is damaged; start from the first page"))
    return value, last_id


def _whole(value, largest: int) -> bool:
    return type(value) is int and -largest <= value <= largest


def _cursor_value(value, sort: str):
    """The cursor's sort value if it is of the sort's type (a date, a whole number, a finite number), else None."""
    if sort == "updated_at":
        try:
            return parse_datetime(value) if isinstance(value, str) and "\x00" not in value else None
        except (ValueError, OverflowError):
            return None
    if sort == "disagreement":
        number = value if type(value) in (int, float) else None
        return number if number is not None and math.isfinite(number) and abs(number) <= LARGEST_INT else None
    return value if _whole(value, LARGEST_ID if sort == "id" else LARGEST_INT) else None


def judged_by(project: Project, annotator) -> QuerySet[Judgment]:
    """An annotator's own judgments in the project, newest first, with their items (read-only list)."""
    return (
        Judgment.objects.filter(item__project=project, annotator=annotator)
        .select_related("item")
        .order_by("-created_at", "-id")
    )
