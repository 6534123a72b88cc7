"""Errors of the domain that every app raises and every door maps: pages and the API answer 404 for
``NotFound`` (``core.middleware.DomainErrorMiddleware`` and ``core.error_views.api_exception_handler``),
commands print its message. Selectors and services raise these, never ``django.http.Http404``."""


class NotFound(LookupError):
    """What was asked for does not exist, or is not the caller's to see; the message says which."""
