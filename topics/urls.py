from django.urls import path

from . import views

app_name = "topics"

# Included under /generation/, beside the generation pages these link to and start jobs from.
urlpatterns = [
    path("p/<slug:slug>/topics/", views.topics_page, name="topics"),
    path("p/<slug:slug>/topics/run/", views.topic_run_start, name="topic_run_start"),
    path("p/<slug:slug>/topics/runs/<int:run_id>/", views.topic_run_progress, name="topic_run_progress"),
    path(
        "p/<slug:slug>/topics/runs/<int:run_id>/apply/",
        views.topic_run_apply_view,
        name="topic_run_apply",
    ),
    path(
        "p/<slug:slug>/topics/runs/<int:run_id>/discard/",
        views.topic_run_discard_view,
        name="topic_run_discard",
    ),
    path(
        "p/<slug:slug>/topics/runs/<int:run_id>/undo/",
        views.topic_run_undo_view,
        name="topic_run_undo",
    ),
    path("p/<slug:slug>/topics/merge/", views.topics_merge_view, name="topics_merge"),
    path("p/<slug:slug>/topics/select/", views.topics_select_view, name="topics_select"),
    path("p/<slug:slug>/topics/<int:topic_id>/", views.topic_detail, name="topic_detail"),
    path("p/<slug:slug>/topics/<int:topic_id>/rename/", views.topic_rename_view, name="topic_rename"),
    path("p/<slug:slug>/items/<int:item_id>/topic/", views.item_move_view, name="item_move"),
    path(
        "p/<slug:slug>/duplicates/<int:pair_id>/",
        views.near_duplicate_resolve_view,
        name="near_duplicate_resolve",
    ),
    path("p/<slug:slug>/balance/", views.balance_page, name="balance"),
    path("p/<slug:slug>/balance/start/", views.balance_start, name="balance_start"),
    path("p/<slug:slug>/balance/targets/", views.balance_targets, name="balance_targets"),
]
