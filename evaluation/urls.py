from django.urls import path

from . import run_views, views

app_name = "evaluation"

urlpatterns = [
    path("help/metrics/", views.metrics_help, name="metrics_help"),
    path("p/<slug:slug>/agreement/", views.agreement, name="agreement"),
    path("p/<slug:slug>/agreement/cells/", views.agreement_cells, name="agreement_cells"),
    path("p/<slug:slug>/releases/", views.release_list, name="release_list"),
    path("p/<slug:slug>/releases/<int:version>/", views.release_detail, name="release_detail"),
    path(
        "p/<slug:slug>/releases/<int:version>/download.zip", views.release_download, name="release_download"
    ),
    path(
        "p/<slug:slug>/releases/<int:version>/<slug:harness>.zip",
        views.release_harness_download,
        name="release_harness_download",
    ),
    path("p/<slug:slug>/runs/", run_views.run_list, name="run_list"),
    path("p/<slug:slug>/runs/compare/", run_views.run_compare, name="run_compare"),
    path("p/<slug:slug>/runs/import/", run_views.run_import, name="run_import"),
    path("p/<slug:slug>/runs/import/preview/", run_views.run_import_preview, name="run_import_preview"),
    path(
        "p/<slug:slug>/runs/import/<int:import_id>/",
        run_views.results_import_detail,
        name="results_import_detail",
    ),
    path("p/<slug:slug>/runs/<int:run_id>/", run_views.run_detail, name="run_detail"),
    path("p/<slug:slug>/runs/<int:run_id>/cancel/", run_views.run_cancel_view, name="run_cancel"),
    path("p/<slug:slug>/runs/<int:run_id>/judge/", run_views.run_judge_view, name="run_judge"),
    path("p/<slug:slug>/runs/<int:run_id>/export.jsonl", run_views.run_export, name="run_export"),
    path(
        "p/<slug:slug>/runs/<int:run_id>/tables/<slug:table>.csv",
        run_views.run_table_csv,
        name="run_table_csv",
    ),
    path("p/<slug:slug>/api-tokens/", views.api_tokens, name="api_tokens"),
    path("p/<slug:slug>/api-tokens/<int:user_id>/issue/", views.api_token_issue, name="api_token_issue"),
    path("p/<slug:slug>/api-tokens/<int:user_id>/revoke/", views.api_token_revoke, name="api_token_revoke"),
    path("my-api-token/", views.my_api_token, name="my_api_token"),
    path("my-api-token/<int:token_id>/revoke/", views.my_api_token_revoke, name="my_api_token_revoke"),
]
