"""A person's preferences: the interface language (the top bar's select, applied with its button) and
single-key shortcuts (on or off, WCAG 2.1.4)."""

from django import forms
from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import HttpResponseRedirect
from django.shortcuts import redirect, render
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_http_methods, require_POST

from .models import Profile
from .preferences import preferences_update


class PreferencesForm(forms.Form):
    language = forms.ChoiceField(label=gettext_lazy("Interface language"), required=False)
    shortcuts = forms.BooleanField(
        label=gettext_lazy("Single-key shortcuts (1–5, a, r, n, e…)"),
        required=False,
        help_text=gettext_lazy(
            "Turn them off if you use speech input or keys get pressed by accident; shortcuts with Ctrl stay."
        ),
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["language"].choices = [("", _("The browser's language"))] + list(settings.LANGUAGES)


@login_required
@require_http_methods(["GET", "POST"])
def preferences_page(request):
    profile = Profile.objects.filter(user=request.user).first() or Profile(user=request.user)
    form = PreferencesForm(
        request.POST or None, initial={"language": profile.language, "shortcuts": profile.shortcuts}
    )
    if request.method == "POST" and form.is_valid():
        try:
            preferences_update(
                user=request.user,
                session=request.session,
                language=form.cleaned_data["language"],
                shortcuts=form.cleaned_data["shortcuts"],
            )
        except ValidationError as error:
            form.add_error(None, error)
        else:
            response = redirect("annotation:preferences")
            _language_cookie(response, form.cleaned_data["language"])
            messages.success(request, _("Preferences saved."))
            return response
    return render(request, "annotation/preferences.html", {"form": form}, status=400 if form.errors else 200)


@require_POST
def language_set(request):
    """The top bar's language form: saved on the profile when signed in, in a cookie for anonymous pages."""
    language = request.POST.get("language", "")
    following = request.POST.get("next", "/")
    if not url_has_allowed_host_and_scheme(
        following, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        following = "/"
    response = HttpResponseRedirect(following)
    if language not in [code for code, _name in settings.LANGUAGES]:
        return response
    if request.user.is_authenticated:
        preferences_update(user=request.user, session=request.session, language=language)
    _language_cookie(response, language)
    return response


def _language_cookie(response, language: str) -> None:
    if language:
        response.set_cookie(settings.LANGUAGE_COOKIE_NAME, language, max_age=365 * 24 * 3600, samesite="Lax")
    else:
        response.delete_cookie(settings.LANGUAGE_COOKIE_NAME)
