"""Pages of the evaluation app: agreement, releases (cut, follow, download) and API tokens."""

import markdown
import nh3
from django.contrib import messages
from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_required
from django.core.cache import cache
from django.http import FileResponse, Http404, HttpResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.template.loader import render_to_string
from django.utils import timezone
from django.utils.safestring import mark_safe
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods, require_POST

from annotation.designs import design_for
from annotation.labels import class_label
from annotation.permissions import Role, get_project_for_user, projects_for_user
from core.api.tokens import active_tokens, token_revoke
from core.models import ApiToken
from core.polling import poll_response

from . import plots
from .forms import AgreementFilterForm, ApiTokenForm, ReleaseForm
from .models import Release
from .quality.selectors import project_quality
from .releases.archive import stored_archive
from .releases.export import ExportError, harness_zip, parse_formats, zip_stream
from .releases.harnesses import HARNESSES, harness_available
from .releases.splits import SPLITS
from .selectors import (
    AGREEMENT_BOOTSTRAP,
    METADATA_PREFIX,
    agreement_breakdowns,
    agreement_criteria,
    api_example_target,
    judgments_state,
    project_agreement,
    release_for_user,
    releases_for_project,
)
from .selectors.agreement import CACHE_SECONDS, agreement_key
from .selectors.cells import DEFAULT_THRESHOLD, cell_kappa_grid
from .services import ReleaseError, release_request
from .tokens import (
    DEFAULT_EXPIRY_DAYS,
    EXPIRY_DAYS,
    TokenError,
    token_issue,
    token_issue_for_member,
    token_key_may_go_to,
    token_withdraw_project,
)


@login_required
def metrics_help(request):
    """Each metric's definition, paper section, chance baseline and what it leaves out."""
    return render(request, "evaluation/metrics_help.html")


@login_required
def agreement(request, slug):
    project = get_project_for_user(request.user, slug, Role.CURATOR)
    state = judgments_state(project)
    breakdowns = agreement_breakdowns(project, state)
    design = design_for(project)
    # A design with its own breakdown (METER: stage) shows it first, until the curator picks another; ratings
    # open at the design's level of measurement (ExpliCa: interval).
    design_fields = design.agreement_fields()
    initial = {"level": design.rating_level(project)}
    if design_fields:
        initial["by"] = METADATA_PREFIX + design_fields[0]
    form = AgreementFilterForm(
        request.GET or None, rounds=state.rounds, breakdowns=breakdowns, initial=initial
    )
    wanted = form.cleaned_data if form.is_valid() else {}
    by = wanted.get("by") if form.is_bound else initial.get("by")
    level = wanted.get("level") or initial["level"]
    include_own = bool(wanted.get("include_own"))
    # The rendered figures are kept under the same state as the figures: an unchanged project costs one query.
    html_key = "html:" + agreement_key(
        project, wanted.get("round"), by, AGREEMENT_BOOTSTRAP, state, level, include_own
    )
    results = cache.get(html_key)
    if results is None:
        sections = project_agreement(
            project,
            round=wanted.get("round"),
            by=by or None,
            rating_level=level,
            state=state,
            include_own=include_own,
        )
        series = [_("Krippendorff's α"), _("Fleiss' κ"), _("mean Cohen's κ")]
        for section in sections:
            section.plot = plots.forest_plot(
                [(str(row.criterion.label), _points(row.summary, series)) for row in section.rows],
                title=_("Agreement with 95%% intervals: %(scope)s") % {"scope": section.label},
                series=series,
            )
        results = render_to_string(
            "evaluation/agreement.html#results",
            {"sections": sections, "has_judgments": any(section.n_judgments for section in sections)},
            request,
        )
        cache.set(html_key, results, CACHE_SECONDS)
    if request.htmx:
        return HttpResponse(results)
    quality = project_quality(project)
    context = {
        "project": project,
        "form": form,
        "bootstrap": AGREEMENT_BOOTSTRAP,
        "results": mark_safe(results),
        "quality_questions": [
            {"question": question, "annotators": question.annotator_rows(quality.names, quality.method)}
            for question in quality.questions
        ],
    }
    return render(request, "evaluation/agreement.html", context)


def _points(summary, series) -> list[plots.Point]:
    points = []
    for name, estimate in zip(series, (summary.krippendorff, summary.fleiss, summary.cohen.mean)):
        interval = estimate.interval
        points.append(
            plots.Point(
                name, estimate.value, interval.low if interval else None, interval.high if interval else None
            )
        )
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
    grid = cell_kappa_grid(
        project, rows=fields[1], columns=fields[0], criterion=criterion, threshold=threshold
    )
    return render(
        request,
        "evaluation/agreement_cells.html",
        {
            "project": project,
            "grid": grid,
            "criteria": criteria,
            "criterion": criterion,
            "has_judgments": bool(grid.cells),
        },
    )


@login_required
@require_http_methods(["GET", "POST"])
def release_list(request, slug):
    project = get_project_for_user(
        request.user, slug, Role.ANNOTATOR if request.method == "GET" else Role.CURATOR
    )
    can_cut = project.user_role in (Role.CURATOR, Role.OWNER)
    form = ReleaseForm(request.POST or None) if can_cut else None
    if request.method == "POST" and form.is_valid():
        try:
            release = release_request(project=project, user=request.user, **form.options())
        except ReleaseError as exc:
            form.add_error(None, str(exc))
        else:
            messages.info(request, _("Release %(tag)s is being built.") % {"tag": release.tag})
            return redirect("evaluation:release_detail", slug=project.slug, version=release.version)
    context = {
        "project": project,
        "releases": releases_for_project(project),
        "form": form,
        "can_cut": can_cut,
    }
    return render(request, "evaluation/release_list.html", context)


@login_required
def release_detail(request, slug, version):
    project = get_project_for_user(request.user, slug)
    release = release_for_user(project, version)
    finished = release.status in (Release.Status.READY, Release.Status.FAILED)
    context = {"project": project, "release": release, "finished": finished, "splits": SPLITS}
    if release.is_ready:
        context.update(_release_figures(release), harnesses=harness_available(project))
    if request.htmx:
        response = poll_response(request, "evaluation/release_detail.html#status", context, finished=finished)
        if finished:
            response["HX-Refresh"] = "true"  # the whole page gains the figures once the release is ready
        return response
    return render(request, "evaluation/release_detail.html", context)


def _release_figures(release: Release) -> dict:
    facts = release.counts
    classes = facts.get("classes", [])
    by_class = facts.get("by_class_split", {})
    chart = plots.bar_chart(
        [
            (
                class_label(release.project, label),
                [(split, by_class.get(label, {}).get(split, 0)) for split in SPLITS],
            )
            for label in classes
        ],
        title=_("Items per class and split"),
        series=list(SPLITS),
    )
    card_body = release.card.split("\n---\n", 1)[-1] if release.card.startswith("---") else release.card
    card_html = nh3.clean(markdown.markdown(card_body, extensions=["tables", "fenced_code"]))
    return {
        "class_rows": [
            {
                "label": class_label(release.project, label),
                "cells": [by_class.get(label, {}).get(split, 0) for split in SPLITS],
                "total": sum(by_class.get(label, {}).values()),
            }
            for label in classes
        ],
        "split_totals": [facts.get("splits", {}).get(split, 0) for split in SPLITS],
        "chart": chart,
        "card_html": mark_safe(card_html),  # noqa: S308 - sanitised by nh3 just above
        "card_header": release.card.split("\n---\n", 1)[0] if release.card.startswith("---") else "",
    }


@login_required
def release_download(request, slug, version):
    """The release as a zip (card, split files, checksums): the one kept since the cut, or streamed while it is
    written when there is none for these formats and this card."""
    project = get_project_for_user(request.user, slug)
    release = release_for_user(project, version)
    if not release.is_ready:
        raise Http404(_("This release is not ready."))
    try:
        formats = parse_formats(request.GET.getlist("format") or None)
    except ExportError as exc:
        raise Http404(str(exc)) from exc
    filename = f"{project.slug}-{release.tag}.zip"
    stored = stored_archive(release, formats)
    if stored is not None:
        return FileResponse(stored, as_attachment=True, filename=filename, content_type="application/zip")
    response = StreamingHttpResponse(zip_stream(release, formats), content_type="application/zip")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


@login_required
def release_harness_download(request, slug, version, harness):
    """One harness's task folder of the release as a zip: lm-eval or inspect."""
    project = get_project_for_user(request.user, slug)
    release = release_for_user(project, version)
    if not release.is_ready:
        raise Http404(_("This release is not ready."))
    if harness not in HARNESSES:
        raise Http404(_("No such harness: choose lm-eval or inspect."))
    try:
        data = harness_zip(release, harness)
    except ExportError as exc:
        raise Http404(_("This release cannot be run in a harness: %(reason)s") % {"reason": exc}) from exc
    response = HttpResponse(data, content_type="application/zip")
    response["Content-Disposition"] = f'attachment; filename="{project.slug}-{release.tag}-{harness}.zip"'
    return response


@login_required
def api_tokens(request, slug):
    project = get_project_for_user(request.user, slug, Role.OWNER)
    return render(
        request, "evaluation/api_tokens.html", _token_context(project, request.user, request=request)
    )


def _examples(request, projects, key: str = "") -> dict:
    """What the copy-and-paste examples of a token page need: this site's address, a project, a release."""
    slug, version = api_example_target(projects)
    return {
        "example_base": request.build_absolute_uri("/"),
        "example_slug": slug,
        "example_version": version,
        # Shown escaped: a visible "<key>" until a new token is shown, then the token itself.
        "example_key": key or _("<key>"),
        "example_has_key": bool(key),
    }


def _token_context(project, viewer, *, request, **extra) -> dict:
    memberships = list(project.memberships.select_related("user").order_by("user__username"))
    tokens: dict[int, list] = {}
    for token in active_tokens().filter(projects=project).order_by("created"):
        tokens.setdefault(token.user_id, []).append(token)
    rows = [
        {
            "membership": m,
            "tokens": tokens.get(m.user_id, []),
            "may_issue": token_key_may_go_to(viewer, m.user),
        }
        for m in memberships
    ]
    examples = _examples(request, [project], extra.get("new_key", ""))
    return {"project": project, "rows": rows, "expiry_days": EXPIRY_DAYS, **examples, **extra}


@login_required
@require_POST
def api_token_issue(request, slug, user_id):
    project = get_project_for_user(request.user, slug, Role.OWNER)
    member = get_object_or_404(get_user_model(), pk=user_id, memberships__project=project)
    try:
        token, key = token_issue_for_member(
            project=project, member=member, issued_by=request.user, days=_expiry_days(request)
        )
    except TokenError as exc:
        messages.error(request, str(exc))
        return redirect("evaluation:api_tokens", slug=project.slug)
    # Shown once, on this response only; it is never stored, put in a message or in the session.
    return render(
        request,
        "evaluation/api_tokens.html",
        _token_context(project, request.user, request=request, new_token=token, new_key=key),
    )


def _expiry_days(request) -> int:
    value = request.POST.get("days", "")
    return int(value) if value.isdigit() and int(value) in EXPIRY_DAYS else DEFAULT_EXPIRY_DAYS


@login_required
@require_POST
def api_token_revoke(request, slug, user_id):
    project = get_project_for_user(request.user, slug, Role.OWNER)
    member = get_object_or_404(get_user_model(), pk=user_id, memberships__project=project)
    if token_withdraw_project(project=project, member=member):
        messages.success(
            request,
            _("The API tokens of %(user)s no longer reach this project.") % {"user": member.get_username()},
        )
    return redirect("evaluation:api_tokens", slug=project.slug)


@login_required
def my_api_token(request):
    form = ApiTokenForm(request.POST or None, user=request.user)
    context = {"form": form}
    if request.method == "POST" and form.is_valid():
        try:
            token, key = token_issue(user=request.user, issued_by=request.user, **form.cleaned_data)
        except TokenError as exc:
            form.add_error(None, str(exc))
        else:
            context.update(new_token=token, new_key=key, form=ApiTokenForm(user=request.user))
    context["tokens"] = ApiToken.objects.filter(user=request.user).prefetch_related("projects")
    context["now"] = timezone.now()
    chosen = (
        context["new_token"].projects.all() if "new_token" in context else projects_for_user(request.user)
    )
    context.update(_examples(request, chosen.order_by("slug"), context.get("new_key", "")))
    return render(request, "evaluation/my_api_token.html", context)


@login_required
@require_POST
def my_api_token_revoke(request, token_id):
    token = get_object_or_404(ApiToken, pk=token_id, user=request.user)
    token_revoke(token=token)
    messages.success(request, _("The token %(prefix)s… was revoked.") % {"prefix": token.prefix})
    return redirect("evaluation:my_api_token")
