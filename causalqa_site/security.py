"""What every response and log line of the site gets for safety: a Content-Security-Policy (the pages load nothing
from elsewhere: htmx and the styles are vendored), and 403s logged as one line instead of a traceback."""

import logging
from functools import wraps

from django.conf import settings

# The API documentation pages (Swagger UI, Redoc, from drf-spectacular's sidecar) start themselves with an inline
# script; they show only the public schema.
DOCS_POLICY = (
    "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; font-src 'self' data:; worker-src 'self' blob:; frame-ancestors 'none'"
)


class ContentSecurityPolicyMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        if settings.CONTENT_SECURITY_POLICY:
            response.headers.setdefault("Content-Security-Policy", settings.CONTENT_SECURITY_POLICY)
        return response


def docs_policy(view):
    """The policy of an API documentation page (inline start-up script allowed)."""

    @wraps(view)
    def wrapped(request, *args, **kwargs):
        response = view(request, *args, **kwargs)
        response.headers["Content-Security-Policy"] = DOCS_POLICY
        return response

    return wrapped


class OneLineForbidden(logging.Filter):
    """A refused request (403) is an expected event: log its line, not the traceback of the PermissionDenied."""

    def filter(self, record: logging.LogRecord) -> bool:
        if getattr(record, "status_code", None) == 403:
            record.exc_info = None
            record.exc_text = None
        return True
