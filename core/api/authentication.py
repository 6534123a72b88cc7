"""DRF authentication by the hashed, per-project API tokens of ``core.api.tokens``.

The header stays ``Authorization: Token <key>``. The user it returns carries the token's projects as
``api_token_project_ids``: ``annotation.permissions`` then treats every other project as one the caller is
not a member of.
"""

from django.utils.translation import gettext_lazy as _
from rest_framework.authentication import TokenAuthentication
from rest_framework.exceptions import AuthenticationFailed

from core.api.tokens import token_authenticate


class ApiTokenAuthentication(TokenAuthentication):
    def authenticate_credentials(self, key):
        token = token_authenticate(key)
        if token is None:
            raise AuthenticationFailed(_("Invalid, expired or revoked token."))
        user = token.user
        if not user.is_active:
            raise AuthenticationFailed(_("User inactive or deleted."))
        user.api_token_project_ids = frozenset(project.pk for project in token.projects.all())
        return user, token
