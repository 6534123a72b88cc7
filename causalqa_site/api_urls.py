"""The REST API, version 1. Each app adds its routes in its own ``api_urls`` module."""

from django.urls import include, path
from django.views.generic import RedirectView
from drf_spectacular.views import SpectacularAPIView

from core.api.docs import api_docs

urlpatterns = [
    path("schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("docs/", api_docs, name="api-docs"),
    # Links to a Redoc page land on the one documentation page.
    path("redoc/", RedirectView.as_view(pattern_name="api-docs", permanent=True), name="api-redoc"),
    path("v1/", include("annotation.api_urls")),
    path("v1/", include("generation.api_urls")),
    path("v1/", include("evaluation.api_urls")),
]
