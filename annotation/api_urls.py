from django.urls import path

from . import api

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
]
