"""What every response and log line of the site gets for safety: a Content-Security-Policy (the pages load nothing
from elsewhere: htmx and the styles are vendored), and 403s logged as one line instead of a traceback."""

import logging

from django.conf import settings


class ContentSecurityPolicyMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        if settings.CONTENT_SECURITY_POLICY:
            response.headers.setdefault("Content-Security-Policy", settings.CONTENT_SECURITY_POLICY)
        return response


class OneLineForbidden(logging.Filter):
    """A refused request (403) is an expected event: log its line, not the traceback of the PermissionDenied."""

    def filter(self, record: logging.LogRecord) -> bool:
        if getattr(record, "status_code", None) == 403:
            record.exc_info = None
            record.exc_text = None
        return True


class QuietLateDraft(logging.Filter):
    """A draft that arrives just after its assignment was submitted is answered 409 and dropped: the judgment
    is kept, so the race between the last autosave and the submit is not worth a warning in the log."""

    def filter(self, record: logging.LogRecord) -> bool:
        request = getattr(record, "request", None)
        path = getattr(request, "path", "")
        return not (getattr(record, "status_code", None) == 409 and path.endswith("/draft/"))
