"""Saved views of the items page: a named filter, its columns and its sort, per person, shareable in the project.

A view is kept as the items page's own query string, so opening one is following a link; it is checked with
the same reader as the page (``ItemQuery.from_params``) before it is saved.
"""

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import Q, QuerySet
from django.http import QueryDict
from django.utils.http import urlencode
from django.utils.translation import gettext as _

from .item_browser import COLUMNS, BadQuery, ItemQuery
from .models import Project, SavedItemView

# What a view keeps of the page's query string: the filter, the sort and the columns (never a cursor).
KEPT_PARAMS = (*ItemQuery.FILTER_PARAMS, "cols")
MAX_VIEWS_PER_PERSON = 50


def saved_view_query(params: QueryDict) -> str:
    """The part of a query string a view keeps, checked; raises ValidationError naming the bad parameter."""
    try:
        ItemQuery.from_params(params)
    except BadQuery as bad:
        raise ValidationError({"query": f"{bad.field}: {bad}"}) from None
    kept = []
    for key in KEPT_PARAMS:
        for value in params.getlist(key):
            if value == "" or (key == "cols" and value not in COLUMNS):
                continue
            kept.append((key, value))
    return urlencode(kept)


def saved_views_for(project: Project, user) -> QuerySet[SavedItemView]:
    """The views a person can open in a project: their own and the ones others shared."""
    return (
        SavedItemView.objects.filter(project=project)
        .filter(Q(owner=user) | Q(shared=True))
        .select_related("owner")
        .order_by("name", "id")
    )


def saved_view_save(*, project: Project, user, name: str, params: QueryDict, shared: bool) -> SavedItemView:
    """Save (or replace, under the same name) the person's view of the items page."""
    name = (name or "").strip()
    if not name:
        raise ValidationError({"name": _("Give the view a name.")})
    if len(name) > 80:
        raise ValidationError({"name": _("A view's name has 80 characters at most.")})
    query = saved_view_query(params)
    mine = SavedItemView.objects.filter(project=project, owner=user)
    if not mine.filter(name=name).exists() and mine.count() >= MAX_VIEWS_PER_PERSON:
        raise ValidationError(
            {"name": _("You have %(n)d saved views here; delete one first.") % {"n": MAX_VIEWS_PER_PERSON}}
        )
    try:
        with transaction.atomic():
            view, _created = SavedItemView.objects.update_or_create(
                project=project, owner=user, name=name, defaults={"query": query, "shared": shared}
            )
    except IntegrityError:  # the same name saved twice at once: the other save won
        view = SavedItemView.objects.get(project=project, owner=user, name=name)
    return view


def saved_view_delete(*, project: Project, user, view_id: int) -> str:
    """Delete one of the person's own views; returns its name. Someone else's shared view cannot be deleted."""
    in_range = 0 < view_id < 2**63  # past the database's integers there is no such view, not a server error
    view = SavedItemView.objects.filter(project=project, owner=user, pk=view_id).first() if in_range else None
    if view is None:
        raise ValidationError({"view": _("There is no such view of yours in this project.")})
    view.delete()
    return view.name
