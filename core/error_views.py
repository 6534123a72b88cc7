"""Errors under /api/ are JSON with a clear message, like the API's own; pages keep Django's HTML errors."""

from django.http import Http404, JsonResponse
from django.views import defaults
from rest_framework.views import exception_handler

from core.errors import NotFound


def api_not_found(request, path=""):
    return JsonResponse(
        {"detail": f"No API endpoint at {request.path}. See /api/schema/ for the endpoints."}, status=404
    )


def server_error(request):
    if request.path.startswith("/api/"):
        return JsonResponse(
            {"detail": "Internal server error: the request failed on the server and was logged."}, status=500
        )
    return defaults.server_error(request)


def bad_request(request, exception):
    """A request Django refuses before any view (a body over DATA_UPLOAD_MAX_MEMORY_SIZE, too many fields)."""
    if request.path.startswith("/api/"):
        return JsonResponse({"detail": _api_reason(exception, "Bad request.")}, status=400)
    return defaults.bad_request(request, exception)


def permission_denied(request, exception):
    if request.path.startswith("/api/"):
        return JsonResponse({"detail": "You do not have permission to perform this action."}, status=403)
    return defaults.permission_denied(request, exception)


def _api_reason(exception, fallback: str) -> str:
    from django.core.exceptions import RequestDataTooBig, TooManyFieldsSent

    if isinstance(exception, RequestDataTooBig):
        return "The request body is too large."
    if isinstance(exception, TooManyFieldsSent):
        return "The request has too many fields."
    return fallback


def not_found(request, exception):
    if request.path.startswith("/api/"):
        return api_not_found(request)
    return defaults.page_not_found(request, exception)


def api_exception_handler(exc, context):
    """DRF's handler, with the domain's errors mapped first (``NotFound`` → 404 with its message)."""
    if isinstance(exc, NotFound):
        exc = Http404(str(exc))
    return exception_handler(exc, context)
