"""Reads of releases and their frozen items."""

from collections.abc import Iterator

from django.db.models import QuerySet, TextField
from django.db.models.functions import Cast

from annotation.models import Project
from core.errors import NotFound

from ..models import Release, ReleaseItem


def releases_for_project(project: Project) -> QuerySet[Release]:
    return Release.objects.filter(project=project).select_related("created_by").order_by("-version")


def release_for_user(project: Project, version: str | int) -> Release:
    """The release ``vN`` (or ``N``) of a project the caller may already see; 404 otherwise."""
    text = str(version).lower().removeprefix("v")
    if not text.isdigit():
        raise NotFound(f"No release {version!r}: versions look like v1, v2…")
    release = (
        Release.objects.filter(project=project, version=int(text))
        .select_related("project", "created_by")
        .first()
    )
    if release is None:
        raise NotFound(f"{project.slug} has no release v{int(text)}.")
    return release


def release_split_texts(release: Release, split: str, chunk_size: int = 2000) -> Iterator[str]:
    """The frozen records of one split in order, as the JSON text the database holds, streamed.

    Exports parse the text themselves (with orjson): several times faster than decoding every
    record through the ORM and encoding it again.
    """
    rows = (
        ReleaseItem.objects.filter(release=release, split=split)
        .order_by("position")
        .annotate(text=Cast("data", TextField()))
        .values_list("text", flat=True)
    )
    return rows.iterator(chunk_size=chunk_size)


def api_example_target(projects) -> tuple[str, str]:
    """(project slug, release tag) for the token pages' copy-and-paste examples: the newest ready release of the
    first of ``projects`` that has one, else the first project with a placeholder version, else placeholders."""
    projects = list(projects)
    release = (
        Release.objects.filter(project__in=projects, status=Release.Status.READY)
        .select_related("project")
        .order_by("project__slug", "-version")
        .first()
    )
    if release is not None:
        return release.project.slug, f"v{release.version}"
    return (projects[0].slug if projects else "<project>"), "<version>"
