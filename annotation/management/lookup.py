"""Lookups the management commands of every app share."""

from django.core.management.base import CommandError

from annotation.models import Project


def project_or_error(slug: str) -> Project:
    """The project with this slug, or a CommandError that names the slug."""
    project = Project.objects.filter(slug=slug).first()
    if project is None:
        raise CommandError(f"No project with slug {slug!r}.")
    return project
