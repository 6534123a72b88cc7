"""Pages for topics (the topic-modelling run, curating topics, near-duplicates) and class balance.

Members read; curators and owners change topics, decide duplicates, set targets and start jobs.
"""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import BadRequest, ValidationError
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from annotation.labels import class_label
from annotation.models import Item
from annotation.permissions import Role, get_project_for_user, has_role
from core.polling import poll_response
from generation import local_models
from generation import selectors as generation_selectors
from generation.services import JobInvalid

from . import selectors
from .balance import class_gaps, gap_jobs_start, gap_proposals
from .duplicates import near_duplicate_resolve
from .embeddings import local_model_of, needs_ml_extra
from .forms import ClassTargetsForm, FillGapForm, TopicChoiceForm, TopicRenameForm, TopicRunForm
from .models import NearDuplicate, Topic, TopicRun
from .proposal import (
    applied_runs,
    pending_proposal,
    proposal_compare,
    topic_run_apply,
    topic_run_discard,
    topic_run_undo,
    undoable_run,
)
from .run import latest_run, seed_words_format, topic_run_create
from .services import (
    class_targets_set,
    class_targets_set_table,
    item_move_to_topic,
    topic_rename,
    topics_merge,
    topics_select,
)

PROPOSAL_FIELDS = ("topic", "endpoint", "answer_endpoint", "answer_variant", "batch_size")


def _can_curate(request, project) -> bool:
    return has_role(request.user, project, Role.CURATOR)


def _errors_message(request, exc: ValidationError) -> None:
    for message in exc.messages:
        messages.error(request, message)


def _run_form(project, run: TopicRun | None) -> TopicRunForm:
    if run is None:
        return TopicRunForm(initial={"embedding_model": local_model_of(project)})
    params = run.params or {}
    return TopicRunForm(
        initial={
            **{
                key: params.get(key)
                for key in ("min_cluster_size", "min_samples", "dimensions", "duplicate_threshold")
            },
            "seed_words": seed_words_format(params.get("seed_words") or {}),
            "embedding_model": local_model_of(project),
        }
    )


def _topics_page(request, project, run_form=None, status=200):
    run = latest_run(project)
    topics = selectors.topics_overview(project)
    done_runs = TopicRun.objects.filter(project=project, status=TopicRun.Status.SUCCEEDED)
    context = {
        "project": project,
        "run": run,
        "run_finished": run is None or run.is_finished,
        "run_form": run_form or _run_form(project, run),
        "needs_ml_extra": needs_ml_extra(project) and not local_models.ml_installed(),
        "comparison": proposal_compare(pending) if (pending := pending_proposal(project)) else None,
        "applied_runs": applied_runs(project),
        "undoable": undoable_run(project),
        "install_hint": local_models.INSTALL_HINT,
        "topics": topics,
        "map": selectors.topic_map(project, done_runs.order_by("-created_at", "-pk").first(), topics),
        "duplicates": selectors.open_near_duplicates(project),
        "merge_form": TopicChoiceForm(project=project),
        "can_curate": _can_curate(request, project),
    }
    return render(request, "topics/topics.html", context, status=status)


@login_required
def topics_page(request, slug):
    project = get_project_for_user(request.user, slug)
    return _topics_page(request, project)


@login_required
def topic_run_progress(request, slug, run_id):
    """The run's progress, polled by the page; 286 (stop polling) once it is over."""
    project = get_project_for_user(request.user, slug)
    run = get_object_or_404(TopicRun.objects.defer("map_points"), project=project, pk=run_id)
    response = poll_response(
        request,
        "topics/topics.html#run",
        {"project": project, "run": run, "run_finished": run.is_finished},
        finished=run.is_finished,
    )
    if run.is_finished:
        response["HX-Refresh"] = "true"  # the new topics are ready: show them
    return response


@login_required
@require_POST
def topic_run_start(request, slug):
    project = get_project_for_user(request.user, slug, Role.CURATOR)
    form = TopicRunForm(request.POST)
    if form.is_valid():
        try:
            topic_run_create(
                project=project,
                user=request.user,
                params=form.params(),
                embedding_model=form.cleaned_data["embedding_model"],
            )
        except JobInvalid as exc:
            for field, message in exc.errors.items():
                form.add_error(field if field in form.fields else None, message)
        else:
            return redirect("topics:topics", slug=project.slug)
    return _topics_page(request, project, run_form=form, status=400)


def _run_decision(request, slug, run_id, decide, done):
    """A curator's decision on a topic run (apply, undo, discard): the service decides, a refusal becomes the
    page's message, and the curator is back on the topics page either way."""
    project = get_project_for_user(request.user, slug, Role.CURATOR)
    run = get_object_or_404(TopicRun.objects.defer("map_points"), project=project, pk=run_id)
    try:
        decide(run)
    except ValidationError as exc:
        _errors_message(request, exc)
    else:
        done(run)
    return redirect("topics:topics", slug=project.slug)


@login_required
@require_POST
def topic_run_apply_view(request, slug, run_id):
    return _run_decision(
        request,
        slug,
        run_id,
        lambda run: topic_run_apply(
            run=run, curator=request.user, expected=request.POST.get("expected") or None
        ),
        lambda run: messages.success(
            request, _("The topics of run #%(id)s are now the project's.") % {"id": run.pk}
        ),
    )


@login_required
@require_POST
def topic_run_undo_view(request, slug, run_id):
    return _run_decision(
        request,
        slug,
        run_id,
        lambda run: topic_run_undo(run=run, curator=request.user),
        lambda run: messages.success(
            request, _("The topics are back as they were before run #%(id)s was applied.") % {"id": run.pk}
        ),
    )


@login_required
@require_POST
def topic_run_discard_view(request, slug, run_id):
    return _run_decision(
        request,
        slug,
        run_id,
        lambda run: topic_run_discard(run=run, curator=request.user),
        lambda run: messages.info(
            request, _("Run #%(id)s discarded; the topics stay as they were.") % {"id": run.pk}
        ),
    )


@login_required
def topic_detail(request, slug, topic_id):
    project = get_project_for_user(request.user, slug)
    topic = get_object_or_404(Topic, project=project, pk=topic_id)
    context = {
        "project": project,
        "topic": topic,
        "items": selectors.topic_items(topic),
        "topics": project.topics.order_by("label"),
        "rename_form": TopicRenameForm(initial={"label": topic.label}),
        "can_curate": _can_curate(request, project),
    }
    return render(request, "topics/topic_detail.html", context)


@login_required
@require_POST
def topic_rename_view(request, slug, topic_id):
    project = get_project_for_user(request.user, slug, Role.CURATOR)
    topic = get_object_or_404(Topic, project=project, pk=topic_id)
    try:
        topic_rename(topic=topic, label=request.POST.get("label", ""))
    except ValidationError as exc:
        _errors_message(request, exc)
    else:
        messages.success(request, _("Topic renamed."))
    if request.POST.get("next") == "detail":
        return redirect("topics:topic_detail", slug=project.slug, topic_id=topic.pk)
    return redirect("topics:topics", slug=project.slug)


@login_required
@require_POST
def topics_merge_view(request, slug):
    project = get_project_for_user(request.user, slug, Role.CURATOR)
    form = TopicChoiceForm(request.POST, project=project)
    if form.is_valid():
        try:
            into = topics_merge(into=form.cleaned_data["into"], other=form.cleaned_data["other"])
        except ValidationError as exc:
            _errors_message(request, exc)
        else:
            messages.success(request, _("Topics merged into “%(label)s”.") % {"label": into.label})
    else:
        messages.error(request, _("Choose two topics of this project to merge."))
    return redirect("topics:topics", slug=project.slug)


@login_required
@require_POST
def topics_select_view(request, slug):
    project = get_project_for_user(request.user, slug, Role.CURATOR)
    ids = [int(value) for value in request.POST.getlist("selected") if value.isdigit()]
    try:
        count = topics_select(project=project, topic_ids=ids)
    except ValidationError as exc:
        _errors_message(request, exc)
    else:
        messages.success(
            request,
            _("%(n)s topics selected for annotation.") % {"n": count}
            if count
            else _("No topic is selected: annotators are served every topic."),
        )
    return redirect("topics:topics", slug=project.slug)


@login_required
@require_POST
def item_move_view(request, slug, item_id):
    project = get_project_for_user(request.user, slug, Role.CURATOR)
    item = get_object_or_404(Item, project=project, pk=item_id)
    previous = item.topic_id
    topic_id = request.POST.get("topic", "")
    topic = get_object_or_404(Topic, project=project, pk=topic_id) if topic_id.isdigit() else None
    try:
        item_move_to_topic(item=item, topic=topic)
    except ValidationError as exc:
        _errors_message(request, exc)
    else:
        messages.success(request, _("Question #%(id)s moved.") % {"id": item.pk})
    if previous:
        return redirect("topics:topic_detail", slug=project.slug, topic_id=previous)
    return redirect("topics:topics", slug=project.slug)


@login_required
@require_POST
def near_duplicate_resolve_view(request, slug, pair_id):
    project = get_project_for_user(request.user, slug, Role.CURATOR)
    pair = get_object_or_404(NearDuplicate, project=project, pk=pair_id)
    try:
        near_duplicate_resolve(pair=pair, keep=request.POST.get("keep", ""), curator=request.user)
    except ValidationError as exc:
        _errors_message(request, exc)
    else:
        messages.success(request, _("Decision recorded."))
    return redirect(f"{redirect('topics:topics', slug=project.slug).url}#duplicates")


# --- class balance -----------------------------------------------------------------------------


def _targets_table(project, data=None) -> tuple[ClassTargetsForm, list]:
    """The targets table's rows: the project's and each selected topic's, bound to ``data`` when given."""
    project_row = ClassTargetsForm(
        data, project=project, targets=project.class_targets, row=_("the whole project")
    )
    topic_rows = [
        (
            t,
            ClassTargetsForm(
                data, project=project, targets=t.class_targets, prefix=f"topic{t.pk}", row=t.label
            ),
        )
        for t in project.topics.filter(selected=True).order_by("label")
    ]
    return project_row, topic_rows


def _balance_page(
    request, project, *, fill_form=None, targets_form=None, topic_targets=None, proposals=None, status=200
):
    endpoints = generation_selectors.endpoints_for_project(project)
    fill_form = fill_form or FillGapForm(project=project, endpoints=endpoints)
    topic = None
    if fill_form.is_bound and fill_form.is_valid():
        topic = fill_form.cleaned_data["topic"]
    elif not fill_form.is_bound and fill_form.fields["topic"].initial:
        topic = project.topics.filter(pk=fill_form.fields["topic"].initial).first()
    context = {
        "project": project,
        "topic": topic,
        "gaps": class_gaps(project=project, topic=topic),
        "fill_form": fill_form,
        "targets_form": targets_form or _targets_table(project)[0],
        "topic_targets": topic_targets if topic_targets is not None else _targets_table(project)[1],
        "class_names": [class_label(project, label) for label in project.label_set],
        "proposals": proposals,
        "reviewing": proposals is not None,
        "proposal_fields": PROPOSAL_FIELDS,
        "has_endpoints": endpoints.exists(),
        "can_curate": _can_curate(request, project),
    }
    return render(request, "topics/balance.html", context, status=status)


@login_required
def balance_page(request, slug):
    """Class gaps; with ``propose``, the proposed jobs to fill them, for the curator to review."""
    project = get_project_for_user(request.user, slug, Role.CURATOR)
    if "propose" not in request.GET:
        return _balance_page(request, project)
    endpoints = generation_selectors.endpoints_for_project(project)
    form = FillGapForm(request.GET, project=project, endpoints=endpoints)
    if not form.is_valid():
        return _balance_page(request, project, fill_form=form, status=400)
    data = form.cleaned_data
    proposals = gap_proposals(
        project=project,
        topic=data["topic"],
        endpoint=data["endpoint"],
        answer_endpoint=data["answer_endpoint"],
        answer_variant=data["answer_variant"],
        batch_size=data["batch_size"],
    )
    initial = {**request.GET.dict(), **{f"count_{p.causal_class}": p.count for p in proposals}}
    review_form = FillGapForm(initial=initial, project=project, endpoints=endpoints)
    for name in PROPOSAL_FIELDS:
        review_form.fields[name].initial = request.GET.get(name) or review_form.fields[name].initial
    return _balance_page(request, project, fill_form=review_form, proposals=proposals)


@login_required
@require_POST
def balance_start(request, slug):
    project = get_project_for_user(request.user, slug, Role.CURATOR)
    endpoints = generation_selectors.endpoints_for_project(project)
    form = FillGapForm(request.POST, project=project, endpoints=endpoints)
    if form.is_valid():
        data = form.cleaned_data
        try:
            jobs = gap_jobs_start(
                project=project,
                user=request.user,
                topic=data["topic"],
                endpoint=data["endpoint"],
                counts=form.counts(),
                answer_endpoint=data["answer_endpoint"],
                answer_variant=data["answer_variant"],
                batch_size=data["batch_size"],
            )
        except JobInvalid as exc:
            for field, message in exc.errors.items():
                form.add_error(None, f"{field}: {message}")
        else:
            messages.success(request, _("%(n)s generation jobs queued.") % {"n": len(jobs)})
            return redirect("generation:project", slug=project.slug)
        proposals = gap_proposals(
            project=project,
            topic=data["topic"],
            endpoint=data["endpoint"],
            answer_endpoint=data["answer_endpoint"],
            answer_variant=data["answer_variant"],
            batch_size=data["batch_size"],
            counts=form.counts(),
        )
    else:
        proposals = []
    return _balance_page(request, project, fill_form=form, proposals=proposals, status=400)


@login_required
@require_POST
def balance_targets(request, slug):
    project = get_project_for_user(request.user, slug, Role.CURATOR)
    topic = None
    prefix = None
    if request.POST.get("topic"):
        if not request.POST["topic"].isdigit() or len(request.POST["topic"]) > 18:
            raise BadRequest("The topic is named by its number.")
        topic = get_object_or_404(Topic, project=project, pk=request.POST["topic"])
        prefix = f"topic{topic.pk}"
    if topic is not None:  # one topic's row alone
        form = ClassTargetsForm(request.POST, project=project, targets={}, prefix=prefix)
        if form.is_valid():
            try:
                class_targets_set(project=project, topic=topic, targets=form.targets())
            except ValidationError as exc:
                _errors_message(request, exc)
            else:
                messages.success(request, _("Targets saved."))
                return redirect("topics:balance", slug=project.slug)
        messages.error(
            request, _("The targets of “%(label)s” must be whole numbers from 0.") % {"label": topic.label}
        )
        return redirect("topics:balance", slug=project.slug)
    # The whole table: the project's row and the rows of the topics the form carries, saved together.
    project_row, topic_rows = _targets_table(project, request.POST)
    topic_rows = [
        (row_topic, form)
        for row_topic, form in topic_rows
        if any(form.add_prefix(name) in request.POST for name in form.fields)
    ]
    if project_row.is_valid() and all(form.is_valid() for _topic, form in topic_rows):
        try:
            class_targets_set_table(
                project=project,
                targets=project_row.targets(),
                topic_targets={row_topic: form.targets() for row_topic, form in topic_rows},
            )
        except ValidationError as exc:
            _errors_message(request, exc)
        else:
            messages.success(request, _("Targets saved."))
            return redirect("topics:balance", slug=project.slug)
    shown = dict(topic_rows)
    _unused, every_row = _targets_table(project)
    rows = [(row_topic, shown.get(row_topic, form)) for row_topic, form in every_row]
    return _balance_page(request, project, targets_form=project_row, topic_targets=rows, status=400)
