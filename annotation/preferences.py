"""A person's preferences (interface language, single-key shortcuts), kept on their profile.

The session carries a copy, written when they sign in or change a preference, so pages read them without
a query: ``core.middleware.ProfileLanguageMiddleware`` activates the language, the context
processor below tells templates whether shortcuts are on.
"""

from django.conf import settings
from django.contrib.auth.signals import user_logged_in
from django.core.exceptions import ValidationError
from django.dispatch import receiver
from django.utils.translation import gettext as _

from core.middleware import SESSION_LANGUAGE

from .models import Profile

__all__ = ["SESSION_LANGUAGE"]  # the middleware reads it back
SESSION_SHORTCUTS_OFF = "profile_shortcuts_off"


def languages() -> list[str]:
    return [code for code, _name in settings.LANGUAGES]


def preferences_update(
    *, user, session=None, language: str | None = None, shortcuts: bool | None = None
) -> Profile:
    """Change what is given; ``language`` "" means the browser's. The session, when given, follows."""
    if language is not None and language not in ("", *languages()):
        raise ValidationError({"language": _("Choose one of the interface's languages.")})
    profile, _created = Profile.objects.get_or_create(user=user)
    fields = []
    if language is not None and profile.language != language:
        profile.language = language
        fields.append("language")
    if shortcuts is not None and profile.shortcuts != shortcuts:
        profile.shortcuts = shortcuts
        fields.append("shortcuts")
    if fields:
        profile.save(update_fields=fields)
    if session is not None:
        session_copy(session, profile)
    return profile


def session_copy(session, profile: Profile) -> None:
    session[SESSION_LANGUAGE] = profile.language
    session[SESSION_SHORTCUTS_OFF] = not profile.shortcuts


@receiver(user_logged_in, dispatch_uid="annotation.preferences_to_session")
def _copy_on_sign_in(sender, request, user, **kwargs):
    profile = Profile.objects.filter(user=user).first()
    if profile is not None and request is not None and hasattr(request, "session"):
        session_copy(request.session, profile)


def preferences(request) -> dict:
    """Context processor: ``shortcuts_on`` for the templates (the item page's keys, the curator's)."""
    session = getattr(request, "session", None)
    return {"shortcuts_on": not (session and session.get(SESSION_SHORTCUTS_OFF))}
