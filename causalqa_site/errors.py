"""Errors under /api/ are JSON with a clear message, like the API's own; pages keep Django's HTML errors."""

from django.http import JsonResponse
from django.views import defaults


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


def not_found(request, exception):
    if request.path.startswith("/api/"):
        return api_not_found(request)
    return defaults.page_not_found(request, exception)
