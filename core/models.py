"""The platform's own rows: API tokens.

A token's scope is a set of rows of ``settings.API_TOKEN_SCOPE_MODEL`` (the projects): core names no app's
model, the configuration does.
"""

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _


class ApiToken(models.Model):
    """A personal key for the REST API. It acts as its user only in the projects it was issued for, with the
    user's role there. Only a SHA-256 of the key is kept: the key is shown once, when it is issued."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens")
    # The table keeps the name it was created with (the model moved here from evaluation, its rows with it).
    projects = models.ManyToManyField(
        settings.API_TOKEN_SCOPE_MODEL, related_name="api_tokens", db_table="evaluation_apitoken_projects"
    )
    name = models.CharField(_("name"), max_length=100, blank=True)
    prefix = models.CharField(max_length=16, help_text=_("The first characters of the key, to recognise it."))
    key_hash = models.CharField(max_length=64, unique=True)
    issued_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField(_("expires"))
    revoked_at = models.DateTimeField(_("revoked"), null=True, blank=True)
    last_used_at = models.DateTimeField(_("last used"), null=True, blank=True)

    class Meta:
        db_table = "evaluation_apitoken"
        verbose_name = _("API token")
        verbose_name_plural = _("API tokens")
        ordering = ["-created", "-id"]

    def __str__(self) -> str:
        return f"{self.prefix}… ({self.user})"
