"""Pages of the annotation app: projects and imports. Views stay thin; services do the work."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods, require_POST

from core.polling import poll_response
from core.spreadsheet import csv_response

from . import dashboard, queue, selectors
from .designs import design_for, designs
from .forms import ImportForm, ProjectCreateForm
from .importing import import_start
from .importing.mapping import FIELDS, Mapping, MappingError, parse_values
from .importing.preview import import_file_preview
from .models import ImportBatch, Item
from .permissions import Role, get_project_for_user, has_role
from .projects import can_create_projects, project_create


@login_required
def home(request):
    """The user's projects; for each, what waits for them in the queue and what they did today."""
    projects = list(selectors.projects_overview(request.user))
    waiting = queue.waiting_counts(request.user, projects)
    today = queue.done_today(request.user, projects)
    for project in projects:
        project.waiting = waiting.get(project.pk, {})
        project.today = today.get(project.pk, {})
    context = {"projects": projects, "can_create": can_create_projects(request.user)}
    return render(request, "annotation/home.html", context)


@login_required
@require_http_methods(["GET", "POST"])
def project_new(request):
    """Start a project: its name, slug, language and the benchmark design it follows."""
    if not can_create_projects(request.user):
        raise PermissionDenied("Only staff and project owners may create projects.")
    form = ProjectCreateForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            project = project_create(created_by=request.user, **form.cleaned_data)
        except ValidationError as error:
            for field, errors in error.message_dict.items():
                form.add_error(field if field in form.fields else None, errors)
        else:
            messages.success(request, _("Project %(name)s created.") % {"name": project.name})
            return redirect("annotation:project_detail", slug=project.slug)
    return render(request, "annotation/project_new.html", {"form": form, "designs": designs()})


@login_required
def designs_help(request):
    """What each design gives a project: item shape, stages, form, agreement, export, metrics."""
    return render(request, "annotation/designs_help.html", {"designs": designs()})


@login_required
def project_detail(request, slug):
    project = get_project_for_user(request.user, slug)
    design = design_for(project)
    stage_counts = design.stage_counts(project)
    curator = has_role(request.user, project, Role.CURATOR)
    context = {
        "project": project,
        "design": design,
        "stage_rows": [
            {"stage": stage, "count": stage_counts.get(stage.key, 0)} for stage in design.stages()
        ],
        "stages_counted": bool(stage_counts),
        "design_context": design.project_context(project),
        "status_counts": selectors.status_counts(project, curator=curator),
        "class_rows": selectors.class_status_table(project, curator=curator),
        "balance": dashboard.class_balance(project, curator=curator),
        "funnel": selectors.class_funnel(project, curator=curator),
        "status_choices": Item.Status.choices,
        "members": selectors.members_by_role(project),
        "can_curate": project.user_role in (Role.CURATOR, Role.OWNER),
    }
    return render(request, "annotation/project_detail.html", context)


@login_required
@require_http_methods(["GET", "POST"])
def import_list(request, slug):
    project = get_project_for_user(request.user, slug, Role.CURATOR)
    form = ImportForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        upload = form.cleaned_data["file"]
        # Every file, a design's published layout included, is imported by the worker through the common
        # import service, which chooses between the design's reader and the column mapping.
        mapping = form.mapping()
        options = {
            "sheet": form.cleaned_data["sheet"].strip(),
            "as_gold": form.cleaned_data["as_gold"],
            "length_bounds": not form.cleaned_data["no_length_bounds"],
        }
        batch = import_start(
            project=project,
            user=request.user,
            upload=upload,
            skip_invalid=form.cleaned_data["skip_invalid"],
            mapping=mapping.as_dict() if mapping else {},
            options=options,
        )
        return redirect("annotation:import_detail", slug=project.slug, batch_id=batch.pk)
    context = {"project": project, "form": form, "batches": selectors.recent_imports(project)}
    return render(request, "annotation/import_list.html", context)


@login_required
@require_POST
def import_preview(request, slug):
    """The mapping step: the file's columns, its first rows, and the mapping proposed for them (nothing is stored)."""
    project = get_project_for_user(request.user, slug, Role.CURATOR)
    upload = request.FILES.get("file")
    if upload is None:
        return render(request, "annotation/_import_mapping.html", {"problem": _("Choose a file first.")})
    preview = import_file_preview(
        project=project,
        data=upload.read(),
        filename=upload.name,
        sheet=request.POST.get("sheet", "").strip(),
        chosen=_posted_mapping(request.POST),
    )
    return render(request, "annotation/_import_mapping.html", {"project": project, **preview})


def _posted_mapping(data) -> Mapping | None:
    """The mapping the page shows, as changed by the curator (None before the page showed one)."""
    if not data.get("mapping_shown"):
        return None
    try:
        values = parse_values(data.get("values", ""))
    except MappingError:
        values = {}
    columns = {name: data.get(f"column_{name}", "") for name in FIELDS}
    return Mapping(columns={name: column for name, column in columns.items() if column}, values=values)


@login_required
def import_detail(request, slug, batch_id):
    project = get_project_for_user(request.user, slug, Role.CURATOR)
    batch = get_object_or_404(ImportBatch, project=project, pk=batch_id)
    dropped = selectors.import_dropped_counts(batch)
    context = {
        "project": project,
        "batch": batch,
        "stage_counts": dropped["by_stage"],
        "dropped_not_stored": dropped["not_stored"],
        "dropped_sample": dropped["sample"],
        "dropped_preview": batch.dropped_rows.all()[:50],
        "finished": batch.status in (ImportBatch.Status.DONE, ImportBatch.Status.FAILED),
    }
    if request.htmx:
        response = poll_response(
            request, "annotation/import_detail.html#report", context, finished=context["finished"]
        )
        return response
    return render(request, "annotation/import_detail.html", context)


@login_required
def import_dropped_csv(request, slug, batch_id):
    """Every dropped row with its reason, streamed as CSV."""
    project = get_project_for_user(request.user, slug, Role.CURATOR)
    batch = get_object_or_404(ImportBatch, project=project, pk=batch_id)
    rows = batch.dropped_rows.values_list("line", "stage", "field", "reason", "external_id", "question")
    return csv_response(
        f"import-{batch.pk}-dropped.csv",
        ["line", "stage", "field", "reason", "id", "question"],
        rows.iterator(chunk_size=2000),
    )


def healthz(request):
    return HttpResponse("ok", content_type="text/plain")
