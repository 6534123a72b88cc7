"""Pages of benchmark runs: start one (from the release page), follow it, read its report, compare runs."""

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods, require_POST

from annotation.designs import design_for
from annotation.importing.reasons import reason_translated
from annotation.permissions import Role, get_project_for_user
from core.polling import poll_response
from generation import local_models
from generation.selectors import endpoints_for_project

from .forms import ResultsImportForm, RunForm
from .models import EvalRun, Release, ResultsImport
from .runs.conditions import CONDITIONS, OPEN
from .runs.export import run_jsonl
from .runs.imported import KNOWN, ResultError, ResultFile, results_preview
from .runs.report import report_tables
from .runs.results_import import results_import_start
from .runs.services import RunInvalid, run_cancel, run_create, run_judge
from .selectors import (
    empty_responses,
    results_imports_for_project,
    run_for_project,
    run_progress,
    runs_for_project,
)

REPORT_KEYS = ("level", "type", "task", "variant")


@login_required
@require_http_methods(["GET", "POST"])
def run_list(request, slug):
    project = get_project_for_user(
        request.user, slug, Role.ANNOTATOR if request.method == "GET" else Role.CURATOR
    )
    can_run = project.user_role in (Role.CURATOR, Role.OWNER) and project.answer_format in CONDITIONS
    form = None
    if can_run:
        releases = Release.objects.filter(project=project, status=Release.Status.READY).order_by("-version")
        initial = {"bertscore_model": project.bertscore_model}
        wanted = request.GET.get("release")
        if wanted and wanted.isascii() and wanted.isdigit() and len(wanted) < 10:  # "²" is a digit too
            initial["release"] = releases.filter(version=int(wanted)).first()
        form = RunForm(
            request.POST or None,
            initial=initial,
            releases=releases,
            endpoints=endpoints_for_project(project),
            conditions=list(CONDITIONS[project.answer_format]),
            field_groups=design_for(project).run_field_groups,
        )
    if request.method == "POST" and form is not None and form.is_valid():
        try:
            run = run_create(project=project, user=request.user, **form.run_options())
        except RunInvalid as exc:
            for field, message in exc.errors.items():
                form.add_error(field if field in form.fields else None, message)
        else:
            return redirect("evaluation:run_detail", slug=project.slug, run_id=run.pk)
    context = {
        "project": project,
        "runs": runs_for_project(project),
        "form": form,
        "can_run": can_run,
        "import_form": _results_form(project) if can_run else None,
        "results_imports": results_imports_for_project(project) if can_run else [],
        "bertscore_needs_ml": project.answer_format == OPEN and not local_models.ml_installed(),
        "bertscore_language": _bertscore_language(project, project.bertscore_model)
        if project.answer_format == OPEN
        else None,
        "install_hint": local_models.INSTALL_HINT,
    }
    return render(request, "evaluation/run_list.html", context)


def _results_form(project, data=None, files=None) -> ResultsImportForm:
    releases = Release.objects.filter(project=project, status=Release.Status.READY).order_by("-version")
    return ResultsImportForm(data, files, releases=releases, project=project)


@login_required
@require_POST
def run_import(request, slug):
    """Import results from elsewhere: the files are stored and a worker checks them row by row; a run is made only
    if all match. The import's page shows its progress, then its report."""
    project = get_project_for_user(request.user, slug, Role.CURATOR)
    form = _results_form(project, request.POST, request.FILES)
    if form.is_valid():
        results_import = results_import_start(
            project=project,
            release=form.cleaned_data["release"],
            name=form.cleaned_data["name"],
            files=form.result_uploads(),
            split=form.cleaned_data["split"],
            columns=_posted_columns({**request.POST.dict(), "columns": form.cleaned_data["columns"]}),
            user=request.user,
            conflicts=form.cleaned_data["conflicts"],
        )
        return redirect("evaluation:results_import_detail", slug=project.slug, import_id=results_import.pk)
    context = {
        "project": project,
        "runs": runs_for_project(project),
        "form": None,
        "can_run": True,
        "import_form": form,
    }
    return render(request, "evaluation/run_list.html", context, status=400)


@login_required
def results_import_detail(request, slug, import_id):
    """An import of results: its status while a worker reads the files, then the run it made with the rows read,
    stored, conflicting and refused per file, or every problem found (nothing was then imported)."""
    project = get_project_for_user(request.user, slug, Role.CURATOR)
    results_import = get_object_or_404(ResultsImport, project=project, pk=import_id)
    finished = results_import.status in (ResultsImport.Status.DONE, ResultsImport.Status.FAILED)
    context = {
        "project": project,
        "results_import": results_import,
        "imported": results_import.report if results_import.status == ResultsImport.Status.DONE else None,
        "import_problems": [result_error_text(ResultError(**error)) for error in results_import.errors],
        "import_conflicts": (results_import.report or {}).get("conflicting", 0)
        if results_import.status == ResultsImport.Status.FAILED
        else 0,
        "finished": finished,
        "stage": _import_stage_text(results_import.stage),
    }
    if request.htmx:
        return poll_response(
            request, "evaluation/results_import_detail.html#report", context, finished=finished
        )
    return render(request, "evaluation/results_import_detail.html", context)


@login_required
@require_POST
def run_import_preview(request, slug):
    """The mapping step of an import of results: the files' columns, first rows and proposed roles (nothing is
    stored)."""
    project = get_project_for_user(request.user, slug, Role.CURATOR)
    files = [
        ResultFile(name=upload.name[:255], data=upload.read(), kind=kind)
        for kind in ("responses", "scores", "rankings")
        if (upload := request.FILES.get(kind))
    ]
    if not files:
        return render(request, "evaluation/_results_mapping.html", {"problem": _("Choose a file first.")})
    preview = results_preview(project=project, files=files, columns=_posted_columns(request.POST))
    preview["problems"] = [reason_translated(problem) for problem in preview["problems"]]
    return render(request, "evaluation/_results_mapping.html", {"project": project, **preview})


def _import_stage_text(stage: str) -> str:
    """What the worker says it is doing (``run_import_results``'s steps), in the reader's language."""
    if stage.startswith("reading "):
        return _("reading %(file)s") % {"file": stage.removeprefix("reading ")}
    return _("storing") if stage == "storing" else stage


def _posted_columns(data) -> str:
    """The *Columns* box, then the role chosen in each select of the mapping step (which wins)."""
    chosen = {
        key.removeprefix("role_"): value
        for key, value in data.items()
        if key.startswith("role_") and value and key.removeprefix("role_") in KNOWN
    }
    typed = data.get("columns", "")
    return ", ".join(filter(None, [typed, *(f"{role}={column}" for role, column in chosen.items())]))


def result_error_text(error) -> str:
    """A problem of an import of results in the reader's language and the page's terms: file, row, field."""
    where = error.file
    if error.line:
        where = _("%(file)s, row %(line)s") % {"file": error.file, "line": error.line}
    reason = reason_translated(error.reason)
    return f"{where}, {error.field}: {reason}" if error.field else f"{where}: {reason}"


def _report_options(request) -> tuple[dict, str | None]:
    keys = {
        key: request.GET[f"{key}_key"].strip()
        for key in REPORT_KEYS
        if request.GET.get(f"{key}_key", "").strip()
    }
    differences = request.GET.get("differences")
    return keys, differences


def _bertscore_language(project, model_dir: str) -> dict | None:
    """What a page says when BERTScore's model was not trained on the project's language: its scores of
    Portuguese answers by an English model rank answers less reliably."""
    model_dir = model_dir or settings.LOCAL_MODEL_DIR
    languages = local_models.language_mismatch(model_dir, project.language)
    if languages is None:
        return None
    return {
        "model": model_dir or local_models.PACKAGED_NAME,
        "languages": ", ".join(sorted(languages)),
        "project": project.language,
    }


@login_required
def run_detail(request, slug, run_id):
    project = get_project_for_user(request.user, slug)
    run = run_for_project(project, run_id)
    curates = project.user_role in (Role.CURATOR, Role.OWNER)
    context = {
        "project": project,
        "run": run,
        "progress": run_progress(run),
        "can_cancel": curates and not run.is_finished,
        # the judges that may score a finished run's open answers (``run_judge`` says why one may not)
        "judges": endpoints_for_project(project)
        if curates and run.answer_format == OPEN and run.status == EvalRun.Status.SUCCEEDED
        else [],
    }
    if request.htmx:
        response = poll_response(
            request, "evaluation/run_detail.html#status", context, finished=run.is_finished
        )
        if run.is_finished:
            response["HX-Refresh"] = "true"
        return response
    keys, differences = _report_options(request)
    context.update(
        bertscore_language=_bertscore_language(project, run.bertscore_model)
        if run.responses.exclude(bertscore_f1=None).exists()
        else None,
        tables=report_tables([run], metadata_keys=keys, differences=differences),
        empty=empty_responses(run),
        keys={**run.metadata_keys, **keys},
        differences=run.differences if differences is None else differences,
    )
    return render(request, "evaluation/run_detail.html", context)


@login_required
@require_POST
def run_cancel_view(request, slug, run_id):
    project = get_project_for_user(request.user, slug, Role.CURATOR)
    run = run_cancel(run=run_for_project(project, run_id))
    messages.info(request, _("Run #%(id)s: cancel requested.") % {"id": run.pk})
    return redirect("evaluation:run_detail", slug=project.slug, run_id=run.pk)


@login_required
@require_POST
def run_judge_view(request, slug, run_id):
    """Judge a finished run's open answers (one imported from a harness's logs, say) with one of the platform's
    judges: the run goes back to a worker, and its page follows the judging."""
    project = get_project_for_user(request.user, slug, Role.CURATOR)
    run = run_for_project(project, run_id)
    wanted = request.POST.get("judge", "")
    judge = (
        endpoints_for_project(project).filter(pk=int(wanted)).first()
        if wanted.isascii() and wanted.isdigit() and len(wanted) < 10
        else None
    )
    if judge is None:
        messages.error(request, _("Choose the judge that scores and ranks the answers."))
        return redirect("evaluation:run_detail", slug=project.slug, run_id=run.pk)
    try:
        run_judge(run=run, judge_endpoint=judge, user=request.user)
    except RunInvalid as exc:
        for message in exc.errors.values():
            messages.error(request, message)
    else:
        messages.info(
            request,
            _("Run #%(id)s: %(judge)s scores and ranks its answers.") % {"id": run.pk, "judge": judge.label},
        )
    return redirect("evaluation:run_detail", slug=project.slug, run_id=run.pk)


def _table_csv(tables, key: str, filename: str) -> HttpResponse:
    table = next((table for table in tables if table.key == key), None)
    if table is None:
        raise Http404(_("No table %(key)s in this report.") % {"key": key})
    response = HttpResponse(
        table.csv(), content_type="text/csv; charset=utf-8"
    )  # a table is small: not streamed
    response["Content-Disposition"] = f'attachment; filename="{filename}-{table.key}.csv"'
    return response


@login_required
def run_table_csv(request, slug, run_id, table):
    project = get_project_for_user(request.user, slug)
    run = run_for_project(project, run_id)
    keys, differences = _report_options(request)
    return _table_csv(
        report_tables([run], metadata_keys=keys, differences=differences),
        table,
        f"{project.slug}-run{run.pk}",
    )


@login_required
def run_export(request, slug, run_id):
    project = get_project_for_user(request.user, slug)
    run = run_for_project(project, run_id)
    response = StreamingHttpResponse(run_jsonl(run), content_type="application/x-ndjson")
    response["Content-Disposition"] = f'attachment; filename="{project.slug}-run{run.pk}.jsonl"'
    return response


@login_required
def run_compare(request, slug):
    """Several runs side by side: every table with the run in each series' name (``?run=3&run=5``)."""
    project = get_project_for_user(request.user, slug)
    chosen = [run_for_project(project, run_id) for run_id in dict.fromkeys(request.GET.getlist("run"))]
    keys, differences = _report_options(request)
    tables = report_tables(chosen, metadata_keys=keys, differences=differences) if chosen else []
    if request.GET.get("table"):
        return _table_csv(tables, request.GET["table"], f"{project.slug}-compare")
    context = {
        "project": project,
        "runs": runs_for_project(project).filter(status=EvalRun.Status.SUCCEEDED),
        "chosen": chosen,
        "tables": tables,
        "query": request.GET.urlencode(),
    }
    return render(request, "evaluation/run_compare.html", context)
