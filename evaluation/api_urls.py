from django.urls import path

from . import api

urlpatterns = [
    path("projects/<slug:slug>/releases/", api.ReleaseListApi.as_view(), name="api-release-list"),
    path("projects/<slug:slug>/releases/<str:version>/", api.ReleaseDetailApi.as_view(), name="api-release-detail"),
    path(
        "projects/<slug:slug>/releases/<str:version>/<str:split>/",
        api.ReleaseSplitApi.as_view(),
        name="api-release-split",
    ),
    path("projects/<slug:slug>/agreement/", api.AgreementApi.as_view(), name="api-agreement"),
]
