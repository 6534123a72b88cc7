"""The curator's pages: the review queue with bulk approval, an item's round side by side with the
decision form, an item's history, and the project dashboard. Curators and owners only (403 for
annotators, 404 for outsiders, through annotation.permissions)."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from . import dashboard, label_models, review
from .control_items import item_mark_control, item_unmark_control
from .curation import bulk_approval_matches, items_bulk_approve
from .designs import design_item_context
from .forms import ApprovalRuleForm, DecisionForm
from .labels import criteria_for_reader
from .models import Item, Option
from .permissions import Role, get_item_for_user, get_project_for_user
from .services import DecisionRefused, item_close

PAGE_SIZE = 50
PREVIEW_SIZE = 100


@login_required
def review_queue(request, slug):
    project = get_project_for_user(request.user, slug, Role.CURATOR)
    page = max(_int(request.GET.get("page"), 1), 1)
    reviews, total = review.review_queue(project, offset=(page - 1) * PAGE_SIZE, limit=PAGE_SIZE)
    rule_form = ApprovalRuleForm(request.GET if "preview" in request.GET else None)
    preview = None
    if rule_form.is_bound and rule_form.is_valid():
        rule = rule_form.rule()
        matches = bulk_approval_matches(project=project, rule=rule)
        preview = {
            "rule": rule,
            "description": rule.describe(),
            "count": len(matches),
            "shown": matches[:PREVIEW_SIZE],
            "item_ids": ",".join(str(match.item.pk) for match in matches),
        }
    context = {
        "project": project,
        "reviews": reviews,
        "total": total,
        "page": page,
        "has_next": page * PAGE_SIZE < total,
        "criteria": criteria_for_reader(project.criteria),
        "rule_form": rule_form if rule_form.is_bound else ApprovalRuleForm(),
        "preview": preview,
        "in_review": project.items.filter(status=Item.Status.IN_REVIEW).count(),
    }
    return render(request, "annotation/review_queue.html", context)


@login_required
@require_POST
def bulk_approve(request, slug):
    project = get_project_for_user(request.user, slug, Role.CURATOR)
    form = ApprovalRuleForm(request.POST)
    item_ids = [int(part) for part in request.POST.get("item_ids", "").split(",") if part.strip().isdigit()]
    if not form.is_valid() or not item_ids:
        messages.error(request, _("Preview the rule before approving."))
        return redirect("annotation:review_queue", slug=project.slug)
    result = items_bulk_approve(project=project, curator=request.user, rule=form.rule(), item_ids=item_ids)
    messages.success(request, _("%(n)s items approved.") % {"n": len(result.approved)})
    if result.no_longer_matching:
        messages.info(
            request,
            _("%(n)s items were left out: they changed or were decided after the preview.")
            % {"n": len(result.no_longer_matching)},
        )
    return redirect("annotation:review_queue", slug=project.slug)


@login_required
def item_review(request, slug, item_id):
    project = get_project_for_user(request.user, slug, Role.CURATOR)
    item = get_item_for_user(request.user, project, item_id)
    return _render_item_review(request, project, item, DecisionForm())


@login_required
@require_POST
def item_decide_view(request, slug, item_id):
    project = get_project_for_user(request.user, slug, Role.CURATOR)
    item = get_item_for_user(request.user, project, item_id)
    form = DecisionForm(request.POST)
    if form.is_valid():
        try:
            made = item_close(
                item=item,
                curator=request.user,
                decision=form.cleaned_data["decision"],
                note=form.cleaned_data["note"],
            )
        except ValidationError as error:
            for field, errors in error.message_dict.items():
                form.add_error(field if field in form.fields else None, errors)
        except DecisionRefused as refused:
            form.add_error(None, str(refused))
        else:
            messages.success(request, _("Decided: %(decision)s.") % {"decision": made.get_decision_display()})
            return redirect(_next_after_decision(project, item))
    return _render_item_review(request, project, item, form, status=400)


@login_required
@require_POST
def item_control_view(request, slug, item_id):
    project = get_project_for_user(request.user, slug, Role.CURATOR)
    item = get_item_for_user(request.user, project, item_id)
    try:
        if request.POST.get("control") == "off":
            item_unmark_control(item=item)
            messages.success(request, _("The item is no longer a control item."))
        else:
            item_mark_control(item=item)
            messages.success(request, _("The item is now a control item."))
    except ValidationError as error:
        for errors in error.message_dict.values():
            messages.error(request, " ".join(errors))
    return redirect("annotation:item_review", slug=project.slug, item_id=item.pk)


@login_required
def item_history(request, slug, item_id):
    project = get_project_for_user(request.user, slug, Role.CURATOR)
    item = get_item_for_user(request.user, project, item_id)
    context = {"project": project, "item": item, "rounds": review.item_history(project, item)}
    return render(request, "annotation/history.html", context)


@login_required
def project_dashboard(request, slug):
    project = get_project_for_user(request.user, slug, Role.CURATOR)
    context = {
        "project": project,
        "by_round": dashboard.status_by_round(project),
        "balance": dashboard.class_balance(project),
        "annotators": dashboard.annotator_stats(project),
        "per_day": dashboard.judgments_by_day(project),
        "status_choices": Item.Status.choices,
        "label_quality": label_models.project_summary(project=project),
    }
    return render(request, "annotation/dashboard.html", context)


def _render_item_review(request, project, item, form, status=200):
    requested_round = _int(request.GET.get("round"), item.round)
    round_review = review.item_round_review(project, item, requested_round)
    context = {
        **design_item_context(project, item),
        "project": project,
        "item": item,
        "options": list(item.options.all()),
        "review": round_review,
        "progress": review.round_progress(item),
        "neighbours": review.queue_neighbours(project, item),
        "form": form,
        "can_decide": item.status == Item.Status.IN_REVIEW
        and requested_round == item.round
        and not item.decisions.filter(round=item.round).exists(),
        "decisions": list(item.decisions.select_related("curator")),
        "label_estimates": label_models.item_estimates(project=project, items=[item]).get(item.pk, [])
        if requested_round == item.round
        else [],
        "rounds": range(1, item.round + 1),
        "role_choices": Option.Role.choices,
        "can_edit": True,
        "is_curator": True,
        "unseen": set(),  # curators see every field (annotation.designs.unseen_before_judging)
    }
    return render(request, "annotation/item_review.html", context, status=status)


def _next_after_decision(project, item):
    """Straight to the next most disputed item, so the curator keeps going; else the queue."""
    following = review.complete_rounds(project).exclude(pk=item.pk).first()
    if following is not None:
        return reverse("annotation:item_review", args=[project.slug, following.pk])
    return reverse("annotation:review_queue", args=[project.slug])


def _int(value, default: int) -> int:
    try:
        number = int(value)
    except (TypeError, ValueError):
        return default
    return (
        number if abs(number) < 2**31 else default
    )  # a page or round past any real one: the database's ints
