"""DRF permission classes over ``annotation.permissions``: the API asks the same helper as the pages.

A view names the role each method needs in ``required_roles`` (default: annotator for reads,
curator for writes). The project named by the ``slug`` URL argument is looked up once and left on
the view as ``view.project``. Outsiders get 404, members without the role 403, anonymous callers 401.

It lives here, not in ``core.api``, because it is made of projects and their roles, which are annotation's:
core sits beneath every app and names no project. What every API shares without projects (the token
authentication, the strict request checks, the schema) is ``core.api``; the other apps' APIs import this.
"""

from rest_framework.permissions import SAFE_METHODS, BasePermission

from .permissions import Role, get_project_for_user


class ProjectRole(BasePermission):
    def has_permission(self, request, view) -> bool:
        if not request.user or not request.user.is_authenticated:
            return False  # DRF answers 401 with the authentication header
        roles = getattr(view, "required_roles", {})
        default = Role.ANNOTATOR if request.method in SAFE_METHODS else Role.CURATOR
        view.project = get_project_for_user(
            request.user, view.kwargs["slug"], roles.get(request.method, default)
        )
        return True
