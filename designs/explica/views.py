"""ExpliCa's curator page: add pairs, edit the connective table and the rule, aggregate, settle ties."""

import json
import math

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from annotation.importing import import_start
from annotation.models import Item, ItemGroup
from annotation.permissions import Role, get_project_for_user

from .aggregation import explica_aggregate, explica_tie_resolve
from .design import (
    DEFAULT_CONNECTIVES,
    DesignSettingsError,
    explica_settings_update,
    unrelated_rule,
)

MAX_UPLOAD = 5 * 1024 * 1024


def _explica_project(user, slug):
    project = get_project_for_user(user, slug, Role.CURATOR)
    if project.design != "explica":
        raise Http404("not an ExpliCa project")
    return project


@login_required
def explica_page(request, slug):
    project = _explica_project(request.user, slug)
    pairs = list(ItemGroup.objects.filter(project=project, kind="pair").order_by("pk"))
    rated = {}
    for group_id, status, judged in Item.objects.filter(project=project, group__kind="pair").values_list(
        "group_id", "status", "round_judged"
    ):
        entry = rated.setdefault(group_id, {"items": 0, "complete": 0, "approved": 0})
        entry["items"] += 1
        entry["complete"] += judged >= project.overlap or status == Item.Status.APPROVED
        entry["approved"] += status == Item.Status.APPROVED
    rows = [
        {"group": group, "gold": (group.metadata or {}).get("gold"), **rated.get(group.pk, {})}
        for group in pairs
    ]
    settings = project.design_settings or {}
    context = {
        "project": project,
        "rows": rows,
        "ties": [
            row
            for row in rows
            if row["gold"] and any(label["label"] == "tie" for label in row["gold"]["orders"].values())
        ],
        "connectives_json": json.dumps(
            settings.get("connectives") or DEFAULT_CONNECTIVES, ensure_ascii=False, indent=2
        ),
        "rule": unrelated_rule(project),
    }
    return render(request, "designs/explica/explica.html", context)


@login_required
@require_POST
def explica_aggregate_view(request, slug):
    project = _explica_project(request.user, slug)
    try:
        report = explica_aggregate(project=project, curator=request.user)
    except (DesignSettingsError, ValueError) as exc:
        messages.error(request, str(exc))
    else:
        messages.success(
            request,
            _(
                "%(labelled)s pairs labelled (%(items)s items approved), %(ties)s with a tie, "
                "%(incomplete)s still being rated."
            )
            % {
                "labelled": len(report.labelled),
                "items": report.approved_items,
                "ties": len(report.ties),
                "incomplete": len(report.incomplete),
            },
        )
    return redirect("designs:explica", slug=project.slug)


@login_required
@require_POST
def explica_tie_view(request, slug, group_id):
    project = _explica_project(request.user, slug)
    group = ItemGroup.objects.filter(project=project, kind="pair", pk=group_id).first()
    if group is None:
        raise Http404("no such pair")
    try:
        explica_tie_resolve(
            group=group,
            order=request.POST.get("order", ""),
            connective=request.POST.get("connective", ""),
            curator=request.user,
        )
    except ValueError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, _("The tie of pair %(pair)s is settled.") % {"pair": group})
    return redirect("designs:explica", slug=project.slug)


@login_required
@require_POST
def explica_pairs_view(request, slug):
    """Pairs from an uploaded file: external_id, sentence_a, sentence_b, or ExpliCa's published layout (one row per
    pair and order, Pair_ID repeated, mean ratings per connective) in CSV, TSV, XLSX, JSON Lines or Parquet.

    The file goes to the worker like any import (the common import service reads it with the design's reader):
    the import's page shows its progress and its report."""
    project = _explica_project(request.user, slug)
    upload = request.FILES.get("file")
    if upload is None or upload.size > MAX_UPLOAD:
        messages.error(request, _("Choose a CSV or JSON Lines file of at most 5 MB."))
        return redirect("designs:explica", slug=project.slug)
    batch = import_start(project=project, user=request.user, upload=upload)
    return redirect("annotation:import_detail", slug=project.slug, batch_id=batch.pk)


def _json_value(text: str, where: str):
    try:
        return json.loads(text)
    except RecursionError:
        raise ValueError(f"{where}: the JSON is nested too deeply") from None


def _finite(value: str, name: str) -> float:
    number = float(value)
    if not math.isfinite(number):
        raise ValueError(f"{name} must be a finite number, not {value!r}")
    return number


@login_required
@require_POST
def explica_settings_view(request, slug):
    project = _explica_project(request.user, slug)
    try:
        connectives = _json_value(request.POST.get("connectives") or "[]", "connectives")
        rule = {
            "best_mean_above": _finite(request.POST.get("best_mean_above", ""), "best_mean_above"),
            "overall_mean_below": _finite(request.POST.get("overall_mean_below", ""), "overall_mean_below"),
        }
        explica_settings_update(project=project, connectives=connectives, rule=rule)
    except (ValueError, DesignSettingsError) as exc:
        messages.error(request, _("The settings were not saved: %(problem)s") % {"problem": exc})
    else:
        messages.success(request, _("Connective table and rule saved; new pairs use them."))
    return redirect("designs:explica", slug=project.slug)
