"""Pages of the generation app: start jobs, follow them live, read every model call, set up endpoints."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods, require_POST

from annotation.permissions import Role, get_project_for_user
from annotation.selectors import class_status_table
from core.polling import poll_response

from . import selectors
from .forms import EndpointForm, JobForm, RevisionSettingsForm
from .kinds import job_kind, job_pages
from .models import ModelEndpoint, PromptTemplate
from .services import (
    JobInvalid,
    api_key_is_set,
    endpoint_create,
    endpoint_test_connection,
    endpoint_update,
    job_cancel,
    job_create,
    job_retry_failed,
    revision_endpoint_for,
)

Kind = PromptTemplate.Kind


def _forms(project, endpoints, data=None, kind=None):
    """The forms of the job cards the project may use (``generation.kinds``), by page key; each also asks the
    options of its kinds (``JobForm``)."""
    return {
        page.key: (page.form or JobForm)(
            data if page.key == kind else None,
            project=project,
            endpoints=endpoints,
            prefix=page.key,
            options=[job_kind(key).options for key in page.kinds],
        )
        for page in job_pages(project)
    }


def _generation_page(request, project, forms, endpoints, status=200):
    cards = []
    for page in job_pages(project):
        card = page.context(project)
        if card is not None:
            cards.append(
                {"page": page, "form": forms[page.key], "context": card, "kind": job_kind(page.kinds[0])}
            )
    context = {
        "project": project,
        "endpoints": endpoints,
        "cards": cards,
        "class_rows": class_status_table(project),
        "revision_endpoint": revision_endpoint_for(project),
        "jobs": selectors.jobs_for_project(project)[:30],
        "is_owner": project.user_role == Role.OWNER,
    }
    return render(request, "generation/project.html", context, status=status)


@login_required
def project_generation(request, slug):
    project = get_project_for_user(request.user, slug, Role.CURATOR)
    endpoints = selectors.endpoints_for_project(project)
    return _generation_page(request, project, _forms(project, endpoints), endpoints)


@login_required
@require_POST
def job_start(request, slug, kind):
    project = get_project_for_user(request.user, slug, Role.CURATOR)
    pages = {page.key: page for page in job_pages(project)}
    if kind not in pages:
        raise Http404("No such kind of job.")
    endpoints = selectors.endpoints_for_project(project)
    forms = _forms(project, endpoints, request.POST, kind)
    form = forms[kind]
    if form.is_valid():
        data = form.cleaned_data
        arguments = {
            **pages[kind].arguments(project, data),
            "project": project,
            "endpoint": data["endpoint"],
            "user": request.user,
        }
        arguments = {**form.option_arguments(job_kind(arguments["kind"]).options), **arguments}
        try:
            job = job_create(**arguments)
        except JobInvalid as exc:
            for field, message in exc.errors.items():
                form.add_error(field if field in form.fields else None, message)
        else:
            return redirect("generation:job_detail", slug=project.slug, job_id=job.pk)
    return _generation_page(request, project, forms, endpoints, status=400)


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
        response = poll_response(
            request, "generation/job_detail.html#progress", context, finished=job.is_finished
        )
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
    return render(
        request,
        "generation/call_detail.html",
        {"call": call, "project": call.project, "server_text_visible": server_text_visible},
    )


@login_required
@require_http_methods(["GET", "POST"])
def endpoint_list(request, slug):
    """The owners' settings page: the project's endpoints, the site's, and who revises answers."""
    project = get_project_for_user(request.user, slug, Role.OWNER)
    form = EndpointForm(project=project, user=request.user, prefix="endpoint")
    settings_form = RevisionSettingsForm(
        instance=selectors.generation_settings(project),
        endpoints=selectors.endpoints_for_project(project),
        prefix="revision",
    )
    if request.method == "POST" and "endpoint-name" in request.POST:
        form = EndpointForm(request.POST, project=project, user=request.user, prefix="endpoint")
        if form.is_valid():
            fields = {name: value for name, value in form.cleaned_data.items() if name != "site_wide"}
            endpoint = endpoint_create(project=None if form.is_site_wide() else project, **fields)
            messages.success(request, _("Endpoint “%(name)s” added.") % {"name": endpoint.name})
            return redirect("generation:endpoint_list", slug=project.slug)
    elif request.method == "POST":
        settings_form = RevisionSettingsForm(
            request.POST,
            instance=selectors.generation_settings(project),
            endpoints=selectors.endpoints_for_project(project),
            prefix="revision",
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
    return render(
        request, "generation/endpoints.html", context, status=400 if request.method == "POST" else 200
    )


def models_help(request):
    """How to connect a model: the documentation's models page (docs/models.md), one source for both."""
    return render(request, "generation/models_help.html", {"content": selectors.models_help_html()})


@login_required
@require_POST
def endpoint_test(request, slug, endpoint_id):
    """*Test connection*: one short call to an endpoint the project can use; the answer or the error in plain
    words (a fragment for htmx, else a message on the endpoints page)."""
    project = get_project_for_user(request.user, slug, Role.OWNER)
    endpoint = get_object_or_404(selectors.endpoints_for_project(project, active_only=False), pk=endpoint_id)
    outcome = endpoint_test_connection(endpoint)
    if request.htmx:
        return render(request, "generation/_connection_test.html", {"endpoint": endpoint, "outcome": outcome})
    (messages.success if outcome.ok else messages.error)(request, f"{endpoint.name}: {outcome.message}")
    return redirect("generation:endpoint_list", slug=project.slug)


@login_required
@require_http_methods(["GET", "POST"])
def endpoint_edit(request, slug, endpoint_id):
    project = get_project_for_user(request.user, slug, Role.OWNER)
    endpoint = get_object_or_404(ModelEndpoint, pk=endpoint_id, project=project)
    form = EndpointForm(
        request.POST or None, instance=endpoint, project=project, user=request.user, prefix="endpoint"
    )
    if request.method == "POST" and form.is_valid():
        endpoint_update(endpoint=endpoint, **form.cleaned_data)
        messages.success(request, _("Endpoint “%(name)s” saved.") % {"name": endpoint.name})
        return redirect("generation:endpoint_list", slug=project.slug)
    endpoint.key_is_set = api_key_is_set(endpoint)
    context = {"project": project, "endpoint": endpoint, "form": form}
    return render(
        request, "generation/endpoint_edit.html", context, status=400 if request.method == "POST" else 200
    )
