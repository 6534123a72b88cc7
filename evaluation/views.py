"""Pages of the evaluation app: agreement, releases (cut, follow, download) and API tokens."""

import markdown
import nh3
from django.contrib import messages
from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_required
from django.db import transaction
from django.http import Http404, StreamingHttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.safestring import mark_safe
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods, require_POST
from rest_framework.authtoken.models import Token

from annotation.designs import design_for
from annotation.models import Judgment
from annotation.permissions import Role, get_project_for_user

from . import plots
from .forms import AgreementFilterForm, ReleaseForm
from .models import Release
from .releases.export import ExportError, parse_formats, zip_stream
from .releases.splits import SPLITS
from .selectors import (
    AGREEMENT_BOOTSTRAP,
    METADATA_PREFIX,
    agreement_breakdowns,
    agreement_criteria,
    project_agreement,
    release_for_user,
    releases_for_project,
)
from .selectors.cells import DEFAULT_THRESHOLD, cell_kappa_grid
from .services import ReleaseError, release_create, token_issue, token_key_visible_to, token_revoke
from .tasks import release_build_task

# htmx polling stops when the server answers 286.
STOP_POLLING = 286


@login_required
def agreement(request, slug):
    project = get_project_for_user(request.user, slug, Role.CURATOR)
    rounds = sorted(set(Judgment.objects.filter(item__project=project).values_list("round", flat=True)))
    breakdowns = agreement_breakdowns(project)
    # A design with its own breakdown (METER: stage) shows it first, until the curator picks another.
    design_fields = design_for(project).agreement_fields()
    initial = {"by": METADATA_PREFIX + design_fields[0]} if design_fields else {}
    form = AgreementFilterForm(request.GET or None, rounds=rounds, breakdowns=breakdowns, initial=initial)
    wanted = form.cleaned_data if form.is_valid() else {}
    by = wanted.get("by") if form.is_bound else initial.get("by")
    sections = project_agreement(
        project, round=wanted.get("round"), by=by or None, rating_level=wanted.get("level") or "ordinal",
        include_own=bool(wanted.get("include_own")),
    )
    series = [_("Krippendorff's α"), _("Fleiss' κ"), _("mean Cohen's κ")]
    for section in sections:
        section.plot = plots.forest_plot(
            [(str(row.criterion.label), _points(row.summary, series)) for row in section.rows],
            title=_("Agreement with 95%% intervals: %(scope)s") % {"scope": section.label},
            series=series,
        )
    context = {
        "project": project,
        "form": form,
        "sections": sections,
        "bootstrap": AGREEMENT_BOOTSTRAP,
        "has_judgments": any(section.n_judgments for section in sections),
    }
    if request.htmx:
        return render(request, "evaluation/agreement.html#results", context)
    return render(request, "evaluation/agreement.html", context)


def _points(summary, series) -> list[plots.Point]:
    points = []
    for name, estimate in zip(series, (summary.krippendorff, summary.fleiss, summary.cohen.mean)):
        interval = estimate.interval
        points.append(plots.Point(name, estimate.value, interval.low if interval else None,
                                  interval.high if interval else None))
    return points


@login_required
def agreement_cells(request, slug):
    """Cohen's kappa per cell of the design's two agreement fields (CausalityCheck: Table 3), weak cells flagged."""
    project = get_project_for_user(request.user, slug, Role.CURATOR)
    fields = design_for(project).agreement_fields()
    if len(fields) < 2:
        raise Http404("this project's design has no cells to tabulate")
    criteria = agreement_criteria(project)
    criterion = request.GET.get("criterion") or "causal_class"
    if criterion not in {spec.key for spec in criteria}:
        criterion = "causal_class"
    threshold = (project.design_settings or {}).get("kappa_threshold", DEFAULT_THRESHOLD)
    grid = cell_kappa_grid(project, rows=fields[1], columns=fields[0], criterion=criterion, threshold=threshold)
    return render(request, "evaluation/agreement_cells.html", {
        "project": project, "grid": grid, "criteria": criteria, "criterion": criterion,
        "has_judgments": bool(grid.cells),
    })


@login_required
@require_http_methods(["GET", "POST"])
def release_list(request, slug):
    project = get_project_for_user(request.user, slug, Role.ANNOTATOR if request.method == "GET" else Role.CURATOR)
    can_cut = project.user_role in (Role.CURATOR, Role.OWNER)
    form = ReleaseForm(request.POST or None) if can_cut else None
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            with transaction.atomic():
                release = release_create(
                    project=project, user=request.user, seed=data["seed"], split_ratios=data["split_ratios"],
                    license=data["license"], notes=data["notes"], subsample=data["subsample"],
                )
                transaction.on_commit(lambda: release_build_task.delay(release.pk))
        except ReleaseError as exc:
            form.add_error(None, str(exc))
        else:
            messages.info(request, _("Release %(tag)s is being built.") % {"tag": release.tag})
            return redirect("evaluation:release_detail", slug=project.slug, version=release.version)
    context = {"project": project, "releases": releases_for_project(project), "form": form, "can_cut": can_cut}
    return render(request, "evaluation/release_list.html", context)


@login_required
def release_detail(request, slug, version):
    project = get_project_for_user(request.user, slug)
    release = release_for_user(project, version)
    finished = release.status in (Release.Status.READY, Release.Status.FAILED)
    context = {"project": project, "release": release, "finished": finished, "splits": SPLITS}
    if release.is_ready:
        context.update(_release_figures(release))
    if request.htmx:
        response = render(request, "evaluation/release_detail.html#status", context)
        if finished:
            response.status_code = STOP_POLLING
            response["HX-Refresh"] = "true"  # the whole page gains the figures once the release is ready
        return response
    return render(request, "evaluation/release_detail.html", context)


def _release_figures(release: Release) -> dict:
    facts = release.counts
    classes = facts.get("classes", [])
    by_class = facts.get("by_class_split", {})
    chart = plots.bar_chart(
        [(label, [(split, by_class.get(label, {}).get(split, 0)) for split in SPLITS]) for label in classes],
        title=_("Items per class and split"),
        series=list(SPLITS),
    )
    card_body = release.card.split("\n---\n", 1)[-1] if release.card.startswith("---") else release.card
    card_html = nh3.clean(markdown.markdown(card_body, extensions=["tables", "fenced_code"]))
    return {
        "class_rows": [
            {"label": label, "cells": [by_class.get(label, {}).get(split, 0) for split in SPLITS],
             "total": sum(by_class.get(label, {}).values())}
            for label in classes
        ],
        "split_totals": [facts.get("splits", {}).get(split, 0) for split in SPLITS],
        "chart": chart,
        "card_html": mark_safe(card_html),  # noqa: S308 - sanitised by nh3 just above
        "card_header": release.card.split("\n---\n", 1)[0] if release.card.startswith("---") else "",
    }


@login_required
def release_download(request, slug, version):
    """The release as a zip (card, split files, checksums), streamed while it is written."""
    project = get_project_for_user(request.user, slug)
    release = release_for_user(project, version)
    if not release.is_ready:
        raise Http404(_("This release is not ready."))
    try:
        formats = parse_formats(request.GET.getlist("format") or None)
    except ExportError as exc:
        raise Http404(str(exc)) from exc
    response = StreamingHttpResponse(zip_stream(release, formats), content_type="application/zip")
    response["Content-Disposition"] = f'attachment; filename="{project.slug}-{release.tag}.zip"'
    return response


@login_required
def api_tokens(request, slug):
    project = get_project_for_user(request.user, slug, Role.OWNER)
    return render(request, "evaluation/api_tokens.html", _token_context(project))


def _token_context(project, **extra) -> dict:
    memberships = list(project.memberships.select_related("user").order_by("user__username"))
    tokens = {token.user_id: token for token in Token.objects.filter(user__in=[m.user for m in memberships])}
    rows = [{"membership": m, "token": tokens.get(m.user_id)} for m in memberships]
    return {"project": project, "rows": rows, **extra}


@login_required
@require_POST
def api_token_issue(request, slug, user_id):
    project = get_project_for_user(request.user, slug, Role.OWNER)
    member = get_object_or_404(get_user_model(), pk=user_id, memberships__project=project)
    token = token_issue(project=project, member=member)
    if token_key_visible_to(request.user, member):
        # Shown once, on this response only; it is never put in a message or the session.
        return render(request, "evaluation/api_tokens.html", _token_context(project, new_token=token))
    messages.success(
        request,
        _("A new token was issued for %(user)s. They can read it on their own API token page.")
        % {"user": member.get_username()},
    )
    return redirect("evaluation:api_tokens", slug=project.slug)


@login_required
@require_POST
def api_token_revoke(request, slug, user_id):
    project = get_project_for_user(request.user, slug, Role.OWNER)
    member = get_object_or_404(get_user_model(), pk=user_id, memberships__project=project)
    if token_revoke(project=project, member=member):
        messages.success(request, _("The API token of %(user)s was revoked.") % {"user": member.get_username()})
    return redirect("evaluation:api_tokens", slug=project.slug)


@login_required
def my_api_token(request):
    token = Token.objects.filter(user=request.user).first()
    return render(request, "evaluation/my_api_token.html", {"token": token})
