from django.urls import path

from . import api

urlpatterns = [
    path("projects/<slug:slug>/releases/", api.ReleaseListApi.as_view(), name="api-release-list"),
    path(
        "projects/<slug:slug>/releases/<str:version>/",
        api.ReleaseDetailApi.as_view(),
        name="api-release-detail",
    ),
    path(
        "projects/<slug:slug>/releases/<str:version>/files/<path:path>",
        api.ReleaseDesignFileApi.as_view(),
        name="api-release-design-file",
    ),
    path(
        "projects/<slug:slug>/releases/<str:version>/harnesses/<slug:harness>/",
        api.ReleaseHarnessApi.as_view(),
        name="api-release-harness",
    ),
    path(
        "projects/<slug:slug>/releases/<str:version>/<str:split>/",
        api.ReleaseSplitApi.as_view(),
        name="api-release-split",
    ),
    path("projects/<slug:slug>/agreement/", api.AgreementApi.as_view(), name="api-agreement"),
    path("projects/<slug:slug>/quality/", api.QualityApi.as_view(), name="api-quality"),
    path("projects/<slug:slug>/runs/", api.RunListApi.as_view(), name="api-run-list"),
    path("projects/<slug:slug>/runs/<int:run_id>/", api.RunDetailApi.as_view(), name="api-run-detail"),
    path("projects/<slug:slug>/runs/<int:run_id>/cancel/", api.RunCancelApi.as_view(), name="api-run-cancel"),
    path("projects/<slug:slug>/runs/<int:run_id>/judge/", api.RunJudgeApi.as_view(), name="api-run-judge"),
    path("projects/<slug:slug>/runs/<int:run_id>/export/", api.RunExportApi.as_view(), name="api-run-export"),
]
