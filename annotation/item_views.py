"""The items page (annotation.item_browser) and its bulk actions (annotation.item_actions).

Curators and owners see every item with filters, search, sort and bulk actions; an annotator sees a
read-only list of the items they judged (only their own judgments: the review stays blind).
"""

import json

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.http import QueryDict, StreamingHttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.http import urlencode
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from core.polling import poll_response
from core.spreadsheet import csv_response

from .item_actions import ACTIONS, MAX_ITEMS_PER_ACTION, bulk_perform, bulk_preview
from .item_browser import (
    COLUMNS,
    DEFAULT_COLUMNS,
    SORT_LABELS,
    BadQuery,
    ItemQuery,
    items_matching,
    items_page,
    judged_by,
)
from .item_filters import active_filters
from .models import BulkRun, Item
from .permissions import Role, get_project_for_user, has_role
from .saved_views import saved_view_delete, saved_view_save, saved_views_for
from .search import search_backlog

EXPORT_FIELDS = (
    "id",
    "external_id",
    "question",
    "context",
    "reference_answer",
    "causal_class",
    "topic",
    "origin",
    "answer_by",
    "status",
    "round",
    "round_judged",
    "round_disagreement",
    "source",
    "metadata",
    "updated_at",
)
# What the page's own links carry besides the filter.
PAGE_PARAMS = ("cursor", "cols")


@login_required
def items_list(request, slug):
    project = get_project_for_user(request.user, slug, Role.ANNOTATOR)
    if not has_role(request.user, project, Role.CURATOR):
        return _my_judgments(request, project)
    error = None
    try:
        query = ItemQuery.from_params(request.GET)
        page = items_page(items_matching(project, query), query, cursor=request.GET.get("cursor", ""))
    except BadQuery as bad:
        error = {"field": bad.field, "message": str(bad)}
        query, page = ItemQuery(), None
    columns = [key for key in request.GET.getlist("cols") if key in COLUMNS] or list(DEFAULT_COLUMNS)
    filter_params = [
        (key, value) for key, values in request.GET.lists() if key not in PAGE_PARAMS for value in values
    ]
    keep = urlencode(filter_params + [("cols", key) for key in request.GET.getlist("cols") if key in COLUMNS])
    topics = list(project.topics.order_by("label").values_list("pk", "label"))
    chips = active_filters(project, query, request.GET, topics) if error is None else []
    context = {
        "project": project,
        "query": query,
        "page": page,
        "error": error,
        "columns": columns,
        "column_choices": list(COLUMNS.items()),
        "sort_choices": [(key, label) for key, label in SORT_LABELS.items()],
        "status_choices": Item.Status.choices,
        "origin_choices": Item.Origin.choices,
        "class_choices": list(project.label_set),
        "topics": topics,
        "chips": chips,
        # The panel stays open only to show a filter that cannot be used; the chips say what is applied.
        "filters_open": error is not None,
        "saved_views": list(saved_views_for(project, request.user)),
        "filter_params": filter_params,
        "keep": keep,
        "first_page": not request.GET.get("cursor"),
        "actions": list(ACTIONS.values()),
        "search_backlog": search_backlog(project),
    }
    return render(request, "annotation/items.html", context, status=400 if error else 200)


@login_required
@require_POST
def items_view_save(request, slug):
    """Save the items page's current filter, columns and sort under a name (replacing one of that name)."""
    project = get_project_for_user(request.user, slug, Role.CURATOR)
    params = QueryDict(request.POST.get("view_query", ""))
    try:
        view = saved_view_save(
            project=project,
            user=request.user,
            name=request.POST.get("name", ""),
            params=params,
            shared=request.POST.get("shared") == "on",
        )
    except ValidationError as bad:
        messages.error(request, _("The view was not saved: %(reason)s") % {"reason": _reason(bad)})
        return redirect(f"{reverse('annotation:items', args=[project.slug])}?{params.urlencode()}")
    messages.success(request, _("View “%(name)s” saved.") % {"name": view.name})
    return redirect(f"{reverse('annotation:items', args=[project.slug])}?{view.query}")


@login_required
@require_POST
def items_view_delete(request, slug, view_id):
    project = get_project_for_user(request.user, slug, Role.CURATOR)
    try:
        name = saved_view_delete(project=project, user=request.user, view_id=view_id)
    except ValidationError as bad:
        messages.error(request, _("Nothing deleted: %(reason)s") % {"reason": _reason(bad)})
    else:
        messages.success(request, _("View “%(name)s” deleted.") % {"name": name})
    return redirect("annotation:items", slug=project.slug)


def _my_judgments(request, project):
    paginator = Paginator(judged_by(project, request.user), 50)
    judgments = paginator.get_page(request.GET.get("page"))
    return render(request, "annotation/my_judgments.html", {"project": project, "judgments": judgments})


def _chosen(project, params):
    """The items a bulk action or export is about: the checked ones, or everything the filter matches."""
    if params.get("scope") == "filter":
        return items_matching(project, ItemQuery.from_params(params))
    ids = [
        int(value)
        for value in params.getlist("item")
        if value.isascii() and value.isdigit() and len(value) < 19
    ]
    return Item.objects.filter(project=project, pk__in=ids)


@login_required
@require_POST
def items_bulk(request, slug):
    """Without ``confirm``: the preview (how many items the action takes) and its form; with it: do it."""
    project = get_project_for_user(request.user, slug, Role.CURATOR)
    back = reverse("annotation:items", args=[project.slug])
    try:
        chosen = _chosen(project, request.POST)
        preview = bulk_preview(project=project, action_key=request.POST.get("action", ""), chosen=chosen)
    except (BadQuery, ValidationError) as bad:
        messages.error(request, _("Nothing done: %(reason)s") % {"reason": _reason(bad)})
        return redirect(back)
    action = preview.action
    form = action.form(project, request.POST if "confirm" in request.POST else None) if action.form else None
    if "confirm" in request.POST and (form is None or form.is_valid()) and preview.taken:
        try:
            outcome = bulk_perform(
                project=project, user=request.user, action_key=action.key, chosen=chosen, values=request.POST
            )
        except ValidationError as bad:
            messages.error(request, _("Nothing done: %(reason)s") % {"reason": _reason(bad)})
        else:
            if outcome.run is not None:  # a worker does it: its page follows it
                return redirect("annotation:items_bulk_run", slug=project.slug, run_id=outcome.run.pk)
            messages.success(request, outcome.message)
        return redirect(f"{back}?{request.POST.get('return_query', '')}")
    hidden = [
        (key, value)
        for key, values in request.POST.lists()
        if key not in ("csrfmiddlewaretoken", "confirm") and (form is None or key not in form.fields)
        for value in values
    ]
    context = {
        "project": project,
        "preview": preview,
        "form": form,
        "hidden": hidden,
        "max_items": MAX_ITEMS_PER_ACTION,
        "back": f"{back}?{request.POST.get('return_query', '')}",
    }
    return render(
        request,
        "annotation/items_bulk.html",
        context,
        status=400 if form is not None and form.errors else 200,
    )


@login_required
def items_bulk_run(request, slug, run_id):
    """A bulk action a worker does: its live status (polled while it runs), then what it did."""
    project = get_project_for_user(request.user, slug, Role.CURATOR)
    run = get_object_or_404(BulkRun, project=project, pk=run_id)
    action = ACTIONS.get(run.action)
    context = {
        "project": project,
        "run": run,
        "label": action.label if action else run.action,
        "finished": run.status in (BulkRun.Status.DONE, BulkRun.Status.FAILED),
    }
    if request.htmx:
        return poll_response(
            request, "annotation/items_bulk_run.html#status", context, finished=context["finished"]
        )
    return render(request, "annotation/items_bulk_run.html", context)


def _reason(error) -> str:
    if isinstance(error, ValidationError) and hasattr(error, "message_dict"):
        return "; ".join(message for messages_ in error.message_dict.values() for message in messages_)
    if isinstance(error, ValidationError):
        return "; ".join(error.messages)
    return f"{error.field}: {error}"


@login_required
def items_export(request, slug):
    """The chosen items as CSV (safe to open in a spreadsheet) or JSONL, streamed."""
    project = get_project_for_user(request.user, slug, Role.CURATOR)
    try:
        chosen = _chosen(project, request.GET)
    except BadQuery as bad:
        messages.error(request, _("Nothing exported: %(reason)s") % {"reason": _reason(bad)})
        return redirect("annotation:items", slug=project.slug)
    rows = chosen.select_related("topic").order_by("pk").iterator(chunk_size=2000)
    if request.GET.get("format") == "jsonl":
        lines = (json.dumps(_export_row(item), ensure_ascii=False) + "\n" for item in rows)
        response = StreamingHttpResponse(lines, content_type="application/jsonl; charset=utf-8")
        response["Content-Disposition"] = f'attachment; filename="{project.slug}-items.jsonl"'
        return response
    return csv_response(
        f"{project.slug}-items.csv",
        EXPORT_FIELDS,
        ([_csv_value(value) for value in _export_row(item).values()] for item in rows),
    )


def _export_row(item: Item) -> dict:
    return {
        "id": item.pk,
        "external_id": item.external_id,
        "question": item.question,
        "context": item.context,
        "reference_answer": item.reference_answer,
        "causal_class": item.causal_class,
        "topic": item.topic.label if item.topic else "",
        "origin": item.origin,
        "answer_by": item.answer_by,
        "status": item.status,
        "round": item.round,
        "round_judged": item.round_judged,
        "round_disagreement": item.round_disagreement,
        "source": item.source,
        "metadata": item.metadata,
        "updated_at": item.updated_at.isoformat(),
    }


def _csv_value(value):
    return json.dumps(value, ensure_ascii=False) if isinstance(value, (dict, list)) else value
