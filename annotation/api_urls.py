from django.urls import path

from . import api, work_api

urlpatterns = [
    path("projects/", api.ProjectListApi.as_view(), name="api-project-list"),
    path("projects/<slug:slug>/", api.ProjectDetailApi.as_view(), name="api-project-detail"),
    path("projects/<slug:slug>/items/", api.ItemListApi.as_view(), name="api-item-list"),
    path(
        "projects/<slug:slug>/items/<int:item_id>/judgments/",
        api.ItemJudgmentListApi.as_view(),
        name="api-item-judgments",
    ),
    path(
        "projects/<slug:slug>/items/<int:item_id>/control/",
        api.ItemControlApi.as_view(),
        name="api-item-control",
    ),
    path("projects/<slug:slug>/item-views/", api.SavedViewListApi.as_view(), name="api-item-view-list"),
    path(
        "projects/<slug:slug>/item-views/<int:view_id>/",
        api.SavedViewDetailApi.as_view(),
        name="api-item-view-detail",
    ),
]

# The annotator's and the curator's work (annotation.work_api): the same actions as the item pages.
urlpatterns += [
    path(
        "projects/<slug:slug>/assignments/next/",
        work_api.AssignmentNextApi.as_view(),
        name="api-assignment-next",
    ),
    path(
        "projects/<slug:slug>/assignments/<int:assignment_id>/",
        work_api.AssignmentDetailApi.as_view(),
        name="api-assignment-detail",
    ),
    path(
        "projects/<slug:slug>/assignments/<int:assignment_id>/answer/",
        work_api.AssignmentAnswerApi.as_view(),
        name="api-assignment-answer",
    ),
    path(
        "projects/<slug:slug>/assignments/<int:assignment_id>/skip/",
        work_api.AssignmentSkipApi.as_view(),
        name="api-assignment-skip",
    ),
    path(
        "projects/<slug:slug>/assignments/<int:assignment_id>/unskip/",
        work_api.AssignmentUnskipApi.as_view(),
        name="api-assignment-unskip",
    ),
    path(
        "projects/<slug:slug>/assignments/<int:assignment_id>/judgment/",
        work_api.AssignmentJudgmentApi.as_view(),
        name="api-assignment-judgment",
    ),
    path(
        "projects/<slug:slug>/items/<int:item_id>/edit/", work_api.ItemEditApi.as_view(), name="api-item-edit"
    ),
    path(
        "projects/<slug:slug>/items/<int:item_id>/revisions/<int:number>/undo/",
        work_api.ItemUndoApi.as_view(),
        name="api-item-undo",
    ),
    path(
        "projects/<slug:slug>/items/<int:item_id>/decision/",
        work_api.ItemDecisionApi.as_view(),
        name="api-item-decision",
    ),
    path("projects/<slug:slug>/decisions/", work_api.BulkDecisionApi.as_view(), name="api-bulk-decision"),
    path(
        "projects/<slug:slug>/decisions/<int:bulk_run_id>/",
        work_api.BulkDecisionRunApi.as_view(),
        name="api-bulk-decision-run",
    ),
]
