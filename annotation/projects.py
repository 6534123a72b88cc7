"""Creating projects: one service for the "New project" page, ``manage.py create_project`` and the demo."""

from django.core.exceptions import ValidationError
from django.db import transaction

from .designs import design_for, designs
from .models import Membership, Project
from .permissions import Role


def can_create_projects(user) -> bool:
    """Staff, and people who already own a project, may start new ones."""
    if not user.is_authenticated:
        return False
    return (
        user.is_staff or user.is_superuser or Membership.objects.filter(user=user, role=Role.OWNER).exists()
    )


@transaction.atomic
def project_create(
    *, name: str, slug: str, design: str, created_by, language: str | None = None, description: str = ""
) -> Project:
    """A new project of ``design`` with that design's defaults; ``created_by`` (if any) becomes its owner.

    ``language``: of the items; by default the design's (ExpliCa's published pairs are English, the others'
    projects start Portuguese).

    Raises ``ValidationError`` naming the field (a taken slug, an unknown design) and writes nothing then.
    """
    known = [known.key for known in designs()]
    if design not in known:
        raise ValidationError({"design": f"Unknown design {design!r}; choose from {', '.join(known)}."})
    if Project.objects.filter(slug=slug).exists():
        raise ValidationError({"slug": f"A project with the slug {slug!r} already exists."})
    defaults = design_for(design).project_defaults()
    project = Project(
        name=name,
        slug=slug,
        design=design,
        language=language or design_for(design).default_language,
        description=description,
        created_by=created_by,
        **defaults,
    )
    project.full_clean()
    project.save()
    if created_by is not None:
        Membership.objects.create(user=created_by, project=project, role=Role.OWNER)
    return project
