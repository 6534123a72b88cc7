from django.urls import path

from . import topic_views, views

app_name = "generation"

urlpatterns = [
    path("p/<slug:slug>/", views.project_generation, name="project"),
    path("p/<slug:slug>/jobs/new/<str:kind>/", views.job_start, name="job_start"),
    path("p/<slug:slug>/jobs/<int:job_id>/", views.job_detail, name="job_detail"),
    path("p/<slug:slug>/jobs/<int:job_id>/cancel/", views.job_cancel_view, name="job_cancel"),
    path("p/<slug:slug>/jobs/<int:job_id>/retry/", views.job_retry_view, name="job_retry"),
    path("p/<slug:slug>/endpoints/", views.endpoint_list, name="endpoint_list"),
    path("p/<slug:slug>/endpoints/<int:endpoint_id>/", views.endpoint_edit, name="endpoint_edit"),
    path("p/<slug:slug>/endpoints/<int:endpoint_id>/test/", views.endpoint_test, name="endpoint_test"),
    path("help/models/", views.models_help, name="models_help"),
    path("calls/<int:call_id>/", views.call_detail, name="call_detail"),
    # Topics and class balance.
    path("p/<slug:slug>/topics/", topic_views.topics_page, name="topics"),
    path("p/<slug:slug>/topics/run/", topic_views.topic_run_start, name="topic_run_start"),
    path(
        "p/<slug:slug>/topics/runs/<int:run_id>/", topic_views.topic_run_progress, name="topic_run_progress"
    ),
    path(
        "p/<slug:slug>/topics/runs/<int:run_id>/apply/",
        topic_views.topic_run_apply_view,
        name="topic_run_apply",
    ),
    path(
        "p/<slug:slug>/topics/runs/<int:run_id>/discard/",
        topic_views.topic_run_discard_view,
        name="topic_run_discard",
    ),
    path(
        "p/<slug:slug>/topics/runs/<int:run_id>/undo/",
        topic_views.topic_run_undo_view,
        name="topic_run_undo",
    ),
    path("p/<slug:slug>/topics/merge/", topic_views.topics_merge_view, name="topics_merge"),
    path("p/<slug:slug>/topics/select/", topic_views.topics_select_view, name="topics_select"),
    path("p/<slug:slug>/topics/<int:topic_id>/", topic_views.topic_detail, name="topic_detail"),
    path("p/<slug:slug>/topics/<int:topic_id>/rename/", topic_views.topic_rename_view, name="topic_rename"),
    path("p/<slug:slug>/items/<int:item_id>/topic/", topic_views.item_move_view, name="item_move"),
    path(
        "p/<slug:slug>/duplicates/<int:pair_id>/",
        topic_views.near_duplicate_resolve_view,
        name="near_duplicate_resolve",
    ),
    path("p/<slug:slug>/balance/", topic_views.balance_page, name="balance"),
    path("p/<slug:slug>/balance/start/", topic_views.balance_start, name="balance_start"),
    path("p/<slug:slug>/balance/targets/", topic_views.balance_targets, name="balance_targets"),
]
