"""Pages of the generation app: start jobs, follow them live, read every model call, set up endpoints."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods, require_POST

from annotation.permissions import Role, get_project_for_user
from annotation.selectors import class_status_table
from designs.causalbench.forms import CausalBenchJobForm
from designs.causalitycheck.forms import ChecklistJobForm
from designs.causalitycheck.seeds import seeds_of
from designs.meter import pipeline as meter
from designs.meter.forms import DecontaminationJobForm, MeterQuestionJobForm

from . import selectors
from .forms import (
    AnswerJobForm,
    DistractorsJobForm,
    EndpointForm,
    QuestionsJobForm,
    RevisionSettingsForm,
)
from .models import ModelEndpoint, PromptTemplate
from .services import (
    JobInvalid,
    api_key_is_set,
    endpoint_from_environment,
    job_cancel,
    job_create,
    job_retry_failed,
    revision_endpoint_for,
)

# htmx polling stops when the server answers 286.
STOP_POLLING = 286
Kind = PromptTemplate.Kind
JOB_FORMS = {Kind.QUESTIONS: QuestionsJobForm, Kind.ANSWER: AnswerJobForm, Kind.DISTRACTORS: DistractorsJobForm,
             "causalbench": CausalBenchJobForm, Kind.CHECKLIST: ChecklistJobForm}
# Jobs only a METER project runs.
METER_JOB_FORMS = {Kind.DECONTAMINATION: DecontaminationJobForm, Kind.METER_QUESTION: MeterQuestionJobForm}


def _job_forms(project) -> dict:
    return {**JOB_FORMS, **(METER_JOB_FORMS if project.design == project.Design.METER else {})}


def _forms(project, endpoints, data=None, kind=None):
    return {
        name: form_class(data if name == kind else None, project=project, endpoints=endpoints, prefix=name)
        for name, form_class in _job_forms(project).items()
    }


def _generation_page(request, project, forms, status=200):
    endpoints = forms[Kind.QUESTIONS].fields["endpoint"].queryset
    context = {
        "project": project,
        "endpoints": endpoints,
        "forms": forms,
        "class_rows": class_status_table(project),
        "waiting_for_answer": selectors.items_waiting_for_answer(project).count(),
        "distractor_candidates": selectors.distractor_candidates(project).count(),
        "revision_endpoint": revision_endpoint_for(project),
        "jobs": selectors.jobs_for_project(project)[:30],
        "meter_waiting": _meter_waiting(project),
        "is_owner": project.user_role == Role.OWNER,
        "checklist_seeds": seeds_of(project).filter(items__isnull=True).distinct().count(),
    }
    return render(request, "generation/project.html", context, status=status)


def _meter_waiting(project) -> dict:
    """How many METER entries wait for each generation step (empty for other designs)."""
    if project.design != project.Design.METER:
        return {}
    counts = meter.stage_counts(project)
    return {"decontamination": counts.get("pair", 0) + counts.get("decontamination", 0),
            "generation": counts.get("generation", 0)}


@login_required
def project_generation(request, slug):
    project = get_project_for_user(request.user, slug, Role.CURATOR)
    endpoint_from_environment()
    endpoints = selectors.endpoints_for_project(project)
    return _generation_page(request, project, _forms(project, endpoints))


@login_required
@require_POST
def job_start(request, slug, kind):
    project = get_project_for_user(request.user, slug, Role.CURATOR)
    if kind not in _job_forms(project):
        raise Http404("No such kind of job.")
    endpoints = selectors.endpoints_for_project(project)
    forms = _forms(project, endpoints, request.POST, kind)
    form = forms[kind]
    if form.is_valid():
        data = form.cleaned_data
        arguments = {"project": project, "kind": kind, "endpoint": data["endpoint"], "user": request.user}
        if kind == Kind.QUESTIONS:
            arguments.update(
                causal_class=data["causal_class"], topic=data["topic"], count=data["count"],
                batch_size=data["batch_size"], answer_endpoint=data["answer_endpoint"],
                answer_variant=data["answer_variant"],
            )
        elif kind == Kind.ANSWER:
            item_ids = data["item_ids"]
            if item_ids is None:
                item_ids = list(selectors.items_waiting_for_answer(project).values_list("pk", flat=True))
            arguments.update(item_ids=item_ids, answer_variant=data["variant"])
        elif kind == Kind.DECONTAMINATION:
            arguments.update(voters=list(data["voters"]))
        elif kind == "causalbench":
            arguments.update(selectors.causalbench_job_arguments(project, data["mode"], endpoint=data["endpoint"],
                                                                domain=data["domain"], count=data["count"]))
        elif kind == Kind.CHECKLIST:
            arguments.update(double_prompt=data["double_prompt"])
        try:
            job = job_create(**arguments)
        except JobInvalid as exc:
            for field, message in exc.errors.items():
                form.add_error(field if field in form.fields else None, message)
        else:
            messages.success(request, _("The job is queued; a worker will start it shortly."))
            return redirect("generation:job_detail", slug=project.slug, job_id=job.pk)
    return _generation_page(request, project, forms, status=400)


@login_required
def job_detail(request, slug, job_id):
    project = get_project_for_user(request.user, slug, Role.CURATOR)
    job = selectors.job_for_project(project, job_id)
    context = {
        "project": project,
        "job": job,
        "calls": selectors.recent_calls(job),
        "created_items": selectors.items_created_by(job) if job.kind == Kind.QUESTIONS else [],
    }
    if request.htmx:
        response = render(request, "generation/job_detail.html#progress", context)
        if job.is_finished:
            response.status_code = STOP_POLLING
        return response
    return render(request, "generation/job_detail.html", context)


@login_required
@require_POST
def job_cancel_view(request, slug, job_id):
    project = get_project_for_user(request.user, slug, Role.CURATOR)
    job = job_cancel(job=selectors.job_for_project(project, job_id))
    if request.htmx:
        return job_detail(request, slug, job.pk)
    messages.info(request, _("The job stops making new calls."))
    return redirect("generation:job_detail", slug=project.slug, job_id=job.pk)


@login_required
@require_POST
def job_retry_view(request, slug, job_id):
    """Make a finished job's failed and unmade calls, for example after the endpoint's key was fixed."""
    project = get_project_for_user(request.user, slug, Role.CURATOR)
    job = selectors.job_for_project(project, job_id)
    retried = job_retry_failed(job=job)
    if retried:
        messages.success(request, _("%(n)s calls will be made again.") % {"n": retried})
    else:
        messages.info(request, _("Nothing to make again: the job is still running or every call succeeded."))
    return redirect("generation:job_detail", slug=project.slug, job_id=job.pk)


@login_required
def call_detail(request, call_id):
    call = selectors.call_for_user(request.user, call_id)
    # What a server answered with an error may come from anywhere an endpoint pointed: owners only read it.
    server_text_visible = call.project is None or call.project.user_role == Role.OWNER
    return render(request, "generation/call_detail.html",
                  {"call": call, "project": call.project, "server_text_visible": server_text_visible})


@login_required
@require_http_methods(["GET", "POST"])
def endpoint_list(request, slug):
    """The owners' settings page: the project's endpoints, the site's, and who revises answers."""
    project = get_project_for_user(request.user, slug, Role.OWNER)
    endpoint_from_environment()
    form = EndpointForm(project=project, prefix="endpoint")
    settings_form = RevisionSettingsForm(
        instance=selectors.generation_settings(project), endpoints=selectors.endpoints_for_project(project),
        prefix="revision",
    )
    if request.method == "POST" and "endpoint-name" in request.POST:
        form = EndpointForm(request.POST, project=project, prefix="endpoint")
        if form.is_valid():
            endpoint = form.save()
            messages.success(request, _("Endpoint “%(name)s” added.") % {"name": endpoint.name})
            return redirect("generation:endpoint_list", slug=project.slug)
    elif request.method == "POST":
        settings_form = RevisionSettingsForm(
            request.POST, instance=selectors.generation_settings(project),
            endpoints=selectors.endpoints_for_project(project), prefix="revision",
        )
        if settings_form.is_valid():
            settings_form.save()
            messages.success(request, _("Revision settings saved."))
            return redirect("generation:endpoint_list", slug=project.slug)
    endpoints = list(selectors.endpoints_for_project(project, active_only=False))
    for endpoint in endpoints:
        endpoint.key_is_set = api_key_is_set(endpoint)
    context = {
        "project": project,
        "endpoints": endpoints,
        "form": form,
        "settings_form": settings_form,
        "revision_endpoint": revision_endpoint_for(project),
    }
    return render(request, "generation/endpoints.html", context, status=400 if request.method == "POST" else 200)


@login_required
@require_http_methods(["GET", "POST"])
def endpoint_edit(request, slug, endpoint_id):
    project = get_project_for_user(request.user, slug, Role.OWNER)
    endpoint = get_object_or_404(ModelEndpoint, pk=endpoint_id, project=project)
    form = EndpointForm(request.POST or None, instance=endpoint, project=project, prefix="endpoint")
    if request.method == "POST" and form.is_valid():
        form.save()
        messages.success(request, _("Endpoint “%(name)s” saved.") % {"name": endpoint.name})
        return redirect("generation:endpoint_list", slug=project.slug)
    endpoint.key_is_set = api_key_is_set(endpoint)
    context = {"project": project, "endpoint": endpoint, "form": form}
    return render(request, "generation/endpoint_edit.html", context, status=400 if request.method == "POST" else 200)
