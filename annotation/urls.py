from django.urls import path

from . import account_views, annotator_views, curator_views, item_views, team_views, views

app_name = "annotation"

urlpatterns = [
    path("", views.home, name="home"),
    path("healthz", views.healthz, name="healthz"),
    path("projects/new/", views.project_new, name="project_new"),
    path("account/", account_views.preferences_page, name="preferences"),
    path("account/language/", account_views.language_set, name="language_set"),
    path("help/designs/", views.designs_help, name="designs_help"),
    path("p/<slug:slug>/", views.project_detail, name="project_detail"),
    path("p/<slug:slug>/imports/", views.import_list, name="import_list"),
    path("p/<slug:slug>/imports/preview/", views.import_preview, name="import_preview"),
    path("p/<slug:slug>/imports/<int:batch_id>/", views.import_detail, name="import_detail"),
    path(
        "p/<slug:slug>/imports/<int:batch_id>/dropped.csv",
        views.import_dropped_csv,
        name="import_dropped_csv",
    ),
    # The annotator.
    path("p/<slug:slug>/queue/", annotator_views.queue_page, name="queue"),
    path("p/<slug:slug>/queue/next/", annotator_views.queue_next, name="queue_next"),
    path(
        "p/<slug:slug>/assignments/<int:assignment_id>/", annotator_views.assignment_page, name="assignment"
    ),
    path(
        "p/<slug:slug>/assignments/<int:assignment_id>/judge/",
        annotator_views.assignment_judge,
        name="assignment_judge",
    ),
    path(
        "p/<slug:slug>/assignments/<int:assignment_id>/answer/",
        annotator_views.assignment_answer,
        name="assignment_answer",
    ),
    path(
        "p/<slug:slug>/assignments/<int:assignment_id>/skip/",
        annotator_views.assignment_skip,
        name="assignment_skip",
    ),
    path(
        "p/<slug:slug>/assignments/<int:assignment_id>/draft/",
        annotator_views.assignment_draft,
        name="assignment_draft",
    ),
    path(
        "p/<slug:slug>/assignments/<int:assignment_id>/change/",
        annotator_views.assignment_change,
        name="assignment_change",
    ),
    path(
        "p/<slug:slug>/assignments/<int:assignment_id>/unskip/",
        annotator_views.assignment_unskip,
        name="assignment_unskip",
    ),
    path("p/<slug:slug>/queue/previous/", annotator_views.judgment_previous, name="judgment_previous"),
    path("p/<slug:slug>/items/<int:item_id>/parts/<slug:part>/", annotator_views.item_part, name="item_part"),
    path(
        "p/<slug:slug>/items/<int:item_id>/revisions/<int:number>/undo/",
        annotator_views.item_undo,
        name="item_undo",
    ),
    path("p/<slug:slug>/guidelines/", annotator_views.guidelines, name="guidelines"),
    path("p/<slug:slug>/revisions/", annotator_views.revision_list, name="revision_list"),
    path("p/<slug:slug>/items/<int:item_id>/revise/", annotator_views.item_revise, name="item_revise"),
    path("p/<slug:slug>/items/<int:item_id>/return/", annotator_views.item_return, name="item_return"),
    # The items page (curators: all items and bulk actions; annotators: what they judged).
    path("p/<slug:slug>/items/", item_views.items_list, name="items"),
    path("p/<slug:slug>/items/bulk/", item_views.items_bulk, name="items_bulk"),
    path("p/<slug:slug>/items/bulk/<int:run_id>/", item_views.items_bulk_run, name="items_bulk_run"),
    path("p/<slug:slug>/items/export/", item_views.items_export, name="items_export"),
    path("p/<slug:slug>/items/views/", item_views.items_view_save, name="items_view_save"),
    path(
        "p/<slug:slug>/items/views/<int:view_id>/delete/",
        item_views.items_view_delete,
        name="items_view_delete",
    ),
    # The owner: team and settings; their history.
    path("p/<slug:slug>/members/", team_views.members, name="members"),
    path(
        "p/<slug:slug>/invitations/<int:invitation_id>/withdraw/",
        team_views.invitation_withdraw_view,
        name="invitation_withdraw",
    ),
    path("invitations/<str:token>/", team_views.invitation_accept_view, name="invitation_accept"),
    path("p/<slug:slug>/members/<int:membership_id>/", team_views.member_update, name="member_update"),
    path("p/<slug:slug>/members/<int:membership_id>/remove/", team_views.member_remove, name="member_remove"),
    path("p/<slug:slug>/settings/", team_views.project_settings, name="project_settings"),
    path("p/<slug:slug>/settings/preview/", team_views.guidelines_preview, name="guidelines_preview"),
    path("p/<slug:slug>/history/", team_views.project_history, name="project_history"),
    # The curator.
    path("p/<slug:slug>/review/", curator_views.review_queue, name="review_queue"),
    path("p/<slug:slug>/review/approve/", curator_views.bulk_approve, name="bulk_approve"),
    path("p/<slug:slug>/items/<int:item_id>/", curator_views.item_review, name="item_review"),
    path("p/<slug:slug>/items/<int:item_id>/decide/", curator_views.item_decide_view, name="item_decide"),
    path("p/<slug:slug>/items/<int:item_id>/control/", curator_views.item_control_view, name="item_control"),
    path("p/<slug:slug>/items/<int:item_id>/history/", curator_views.item_history, name="item_history"),
    path("p/<slug:slug>/dashboard/", curator_views.project_dashboard, name="dashboard"),
]
