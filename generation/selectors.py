"""Reads for the generation pages and API: a few queries per page, never one per row."""

from django.db.models import Q, QuerySet

from annotation.models import Item, Project
from annotation.permissions import get_project_for_user
from core.errors import NotFound

from .models import GenerationJob, LLMCall, ModelEndpoint, ProjectGenerationSettings
from .services.work import ANSWERABLE, call_readers, items_needing_distractors


def endpoints_for_project(project: Project, *, active_only: bool = True) -> QuerySet[ModelEndpoint]:
    """Site-wide endpoints and the project's own."""
    endpoints = ModelEndpoint.objects.filter(Q(project__isnull=True) | Q(project=project))
    if active_only:
        endpoints = endpoints.filter(is_active=True)
    return endpoints.order_by("project_id", "name")


def endpoint_named(project: Project, name: str) -> ModelEndpoint:
    """The project's usable endpoint called ``name`` (or with that model name, or that id, when unambiguous).

    Raises ``LookupError`` saying which endpoints there are.
    """
    usable = endpoints_for_project(project)
    as_id = int(name) if str(name).isdigit() and len(str(name)) <= 18 else None
    matches = list(usable.filter(Q(name=name) | Q(model=name) | Q(pk=as_id)))
    exact = [endpoint for endpoint in matches if endpoint.name == name]
    if len(exact) == 1 or len(matches) == 1:
        return (exact or matches)[0]
    if not matches:
        names = ", ".join(usable.values_list("name", flat=True)) or "none"
        raise LookupError(f"no active endpoint {name!r} for this project (usable: {names})")
    raise LookupError(f"{name!r} matches several endpoints; use the endpoint's name")


def jobs_for_project(project: Project) -> QuerySet[GenerationJob]:
    return project.generation_jobs.select_related("endpoint", "answer_endpoint", "template", "created_by")


def job_for_project(project: Project, job_id: int) -> GenerationJob:
    job = jobs_for_project(project).select_related("answer_template").filter(pk=job_id).first()
    if job is None:
        raise NotFound("No such job in this project.")
    return job


def recent_calls(job: GenerationJob, limit: int = 20) -> list[LLMCall]:
    """The calls that finished last, newest first, without their bulky request and attempts."""
    return list(
        job.calls.exclude(status=LLMCall.Status.PENDING)
        .select_related("item")
        .defer("request", "attempts", "raw_response", "parsed")
        .order_by("-finished_at", "-pk")[:limit]
    )


def items_created_by(job: GenerationJob, limit: int = 50) -> list[Item]:
    return list(
        Item.objects.filter(project_id=job.project_id, metadata__generation__job_id=job.pk).order_by("pk")[
            :limit
        ]
    )


def items_waiting_for_answer(project: Project) -> QuerySet[Item]:
    """Items with no answer yet that wait for one (round 0), or were sent back for revision."""
    return Item.objects.filter(project=project, status__in=ANSWERABLE, reference_answer="").order_by("pk")


def distractor_candidates(project: Project) -> QuerySet[Item]:
    return items_needing_distractors(project)


def generation_settings(project: Project) -> ProjectGenerationSettings:
    return ProjectGenerationSettings.objects.filter(project=project).first() or ProjectGenerationSettings(
        project=project
    )


def call_for_user(user, call_id: int) -> LLMCall:
    """The call, if the user may read it: a member of its project with the role its kind asks (404 for others,
    403 for a member below that role); project-less calls: staff only."""
    call = (
        LLMCall.objects.select_related("job__project", "item__project", "endpoint", "template")
        .filter(pk=call_id)
        .first()
    )
    if call is None:
        raise NotFound("No such call.")
    project = call.job.project if call.job_id else (call.item.project if call.item_id else None)
    if project is None:
        if not user.is_staff:
            raise NotFound("No such call.")
        call.project = None
        return call
    minimum = call_readers(call.job.kind if call.job_id else None, project)
    call.project = get_project_for_user(user, project.slug, minimum)
    return call


def endpoint_names(project) -> set[str]:
    """The names of the model endpoints a project can use: its own and the site's."""
    return set(
        ModelEndpoint.objects.filter(Q(project=project) | Q(project__isnull=True)).values_list(
            "name", flat=True
        )
    )


def models_help_html() -> str:
    """The documentation's page on connecting models, as safe HTML; links to other pages of the docs keep
    their text only (the site serves this one page)."""
    import re

    from django.conf import settings

    from annotation.guidelines import render_markdown

    path = settings.DOCS_DIR / "models.md"
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return ""
    return render_markdown(re.sub(r"\[([^\]]+)\]\((?!https?:)[^)]*\)", r"\1", text))
