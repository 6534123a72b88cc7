"""The signed-in person's own language, from their profile (copied into the session), over the browser's."""

from django.core.handlers.exception import response_for_exception
from django.http import Http404
from django.utils import translation

from core.errors import NotFound

# The session key holding the language of the signed-in person's profile (written at sign-in by
# ``annotation.preferences``).
SESSION_LANGUAGE = "profile_language"


class ProfileLanguageMiddleware:
    """After LocaleMiddleware: a language saved on the profile wins over cookie and Accept-Language."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        session = getattr(request, "session", None)
        language = session.get(SESSION_LANGUAGE) if session is not None else None
        if language:
            translation.activate(language)
            request.LANGUAGE_CODE = translation.get_language()
        response = self.get_response(request)
        if language:
            response.headers.setdefault("Content-Language", language)
        return response


class DomainErrorMiddleware:
    """The one place pages turn the domain's errors into HTTP answers: ``core.errors.NotFound`` → 404
    (the API's views map it in ``core.error_views.api_exception_handler``)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_exception(self, request, exception):
        if isinstance(exception, NotFound):
            return response_for_exception(request, Http404(str(exception)))
        return None
