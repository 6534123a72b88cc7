"""Who may do what in a project. Pages, the API and commands all ask here.

Roles are ordered: annotator < curator < owner. Superusers act as owners everywhere.
A user who is not a member of a project gets a 404 for it, so its existence does not leak.
A request authenticated by an API token reaches only the token's projects (``api_token_project_ids``, left on
the user by ``core.api.authentication``): any other project is one the caller is not a member of.
"""

from django.core.exceptions import PermissionDenied
from django.db.models import Exists, OuterRef, QuerySet, Subquery

from core.db.compiled import CompiledQuery
from core.errors import NotFound

from .models import Assignment, Item, Membership, Project

Role = Membership.Role

ROLE_RANK = {Role.ANNOTATOR: 1, Role.CURATOR: 2, Role.OWNER: 3}


def project_role(user, project: Project) -> str | None:
    """The user's role in the project, or None for an outsider. Cached on the user per project."""
    if not user.is_authenticated:
        return None
    scope = getattr(user, "api_token_project_ids", None)
    if scope is not None and project.pk not in scope:
        return None
    if user.is_superuser:
        return Role.OWNER
    cache = user.__dict__.setdefault("_project_roles", {})
    if project.pk not in cache:
        cache[project.pk] = (
            Membership.objects.filter(user=user, project=project).values_list("role", flat=True).first()
        )
    return cache[project.pk]


def has_role(user, project: Project, minimum: str) -> bool:
    role = project_role(user, project)
    return role is not None and ROLE_RANK[role] >= ROLE_RANK[minimum]


def projects_for_user(user) -> QuerySet[Project]:
    if not user.is_authenticated:
        return Project.objects.none()
    projects = Project.objects.all() if user.is_superuser else Project.objects.filter(memberships__user=user)
    scope = getattr(user, "api_token_project_ids", None)
    return projects if scope is None else projects.filter(pk__in=scope)


def get_project_for_user(user, slug: str, minimum: str = Role.ANNOTATOR) -> Project:
    """The project a request may touch: 404 for outsiders, 403 for members without the role."""
    if user.is_authenticated and not user.is_superuser:
        # The caller's role comes with the project, in the same query (this runs on every page).
        project = _PROJECT_WITH_ROLE.first(slug=slug, user_id=user.pk)
        if project is not None:
            user.__dict__.setdefault("_project_roles", {})[project.pk] = project.member_role
    else:
        project = _PROJECT.first(slug=slug)
    if project is None or project_role(user, project) is None:
        raise NotFound("No such project.")
    if not has_role(user, project, minimum):
        raise PermissionDenied(f"This needs the {Role(minimum).label.lower()} role in {project.name}.")
    project.user_role = project_role(user, project)
    project.user_role_label = Role(project.user_role).label
    return project


def get_assignment_for_user(
    user, project: Project, assignment_id: int, *, with_item: bool = True
) -> Assignment:
    """One of the user's own assignments in the project; anybody else's (even a curator's view) is a 404."""
    if not _an_id(assignment_id):
        raise NotFound("No such assignment.")
    assignment = _ASSIGNMENT.first(
        shape={"with_item": with_item},
        assignment_id=int(assignment_id),
        project_id=project.pk,
        user_id=user.pk,
    )
    if assignment is None:
        raise NotFound("No such assignment.")
    if with_item:
        assignment.item.project = project  # the same row, already read with the caller's role
    return assignment


def get_item_for_user(user, project: Project, item_id: int) -> Item:
    """An item of a project the caller already may see (``get_project_for_user``); other projects' are a 404."""
    if not _an_id(item_id):
        raise NotFound("No such item.")
    item = _one(Item.objects.select_related("group", "answer_author").filter(pk=item_id, project=project))
    if item is None:
        raise NotFound("No such item.")
    return item


def may_edit_item(user, project: Project, item: Item, holds) -> bool:
    """The one rule of who edits an item: curators any; an annotator an item they hold in its current round
    (``holds()``), or one that needs revision (until a model rewrites it, people may), unless the project's
    design keeps its items from annotators (ExpliCa: fifteen raters read the same sentence)."""
    from .designs import design_for

    if has_role(user, project, Role.CURATOR):
        return True
    if not has_role(user, project, Role.ANNOTATOR):
        return False
    item.project = project
    if not design_for(project).annotators_edit(item):
        return False
    return item.status == Item.Status.NEEDS_REVISION or holds()


def can_edit_item(user, project: Project, item: Item) -> bool:
    return may_edit_item(
        user,
        project,
        item,
        lambda: Assignment.objects.filter(
            item=item, annotator=user, round=item.round, status=Assignment.Status.ACTIVE
        ).exists(),
    )


def get_item_for_editing(user, project: Project, item_id: int) -> Item:
    """An item the user may edit now (see ``can_edit_item``), read with that answer in one query."""
    if not _an_id(item_id):
        raise NotFound("No such item.")
    item = _ITEM_HELD.first(item_id=int(item_id), project_id=project.pk, user_id=user.pk)
    if item is None:
        raise NotFound("No such item.")
    if not may_edit_item(user, project, item, lambda: item.held_by_user):
        raise PermissionDenied("You may edit an item while it is assigned to you, or when it needs revision.")
    item.project = project
    return item


def _an_id(value) -> bool:
    """Whether ``value`` can be a row's id: a number past the database's integers names no row (a 404, not a
    server error)."""
    try:
        return 0 < int(value) < 2**63
    except (TypeError, ValueError):
        return False


def _one(queryset: QuerySet):
    """The row of a query by a unique key, or None. Unlike ``first()`` it adds no ORDER BY, which costs
    more to compile on every request than the database takes to answer."""
    try:
        return queryset.get()
    except queryset.model.DoesNotExist:
        return None


# The queries every page of the annotator's loop runs, compiled once (see core.db.compiled).
def _project_with_role(*, slug: str, user_id: int) -> QuerySet[Project]:
    role = Membership.objects.filter(project=OuterRef("pk"), user_id=user_id).values("role")[:1]
    return Project.objects.filter(slug=slug).annotate(member_role=Subquery(role))[:1]


def _assignment_of_user(
    *, assignment_id: int, project_id: int, user_id: int, with_item: bool
) -> QuerySet[Assignment]:
    assignments = Assignment.objects.filter(
        pk=assignment_id, item__project_id=project_id, annotator_id=user_id
    )
    return (assignments.select_related("item") if with_item else assignments)[:1]


def _item_and_whether_held(*, item_id: int, project_id: int, user_id: int) -> QuerySet[Item]:
    held = Assignment.objects.filter(
        item=OuterRef("pk"), annotator_id=user_id, round=OuterRef("round"), status=Assignment.Status.ACTIVE
    )
    return Item.objects.filter(pk=item_id, project_id=project_id).annotate(held_by_user=Exists(held))[:1]


_PROJECT_WITH_ROLE = CompiledQuery(_project_with_role)
_PROJECT = CompiledQuery(lambda *, slug: Project.objects.filter(slug=slug)[:1])
_ASSIGNMENT = CompiledQuery(_assignment_of_user)
_ITEM_HELD = CompiledQuery(_item_and_whether_held)
