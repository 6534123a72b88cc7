"""The REST API, version 1. Each app adds its routes in its own ``api_urls`` module."""

from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularRedocView, SpectacularSwaggerView

from .security import docs_policy

urlpatterns = [
    path("schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("docs/", docs_policy(SpectacularSwaggerView.as_view(url_name="api-schema")), name="api-docs"),
    path(
        "redoc/",
        docs_policy(SpectacularRedocView.as_view(url_name="api-schema", template_name="api/redoc.html")),
        name="api-redoc",
    ),
    path("v1/", include("annotation.api_urls")),
    path("v1/", include("generation.api_urls")),
    path("v1/", include("evaluation.api_urls")),
]
