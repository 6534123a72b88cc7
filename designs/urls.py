"""Pages of individual designs (namespace ``designs``), under the project's address like the annotation pages."""

from django.urls import path

from .causalbench import views as causalbench_views
from .explica import views as explica_views

app_name = "designs"

urlpatterns = [
    path("p/<slug:slug>/causalbench/check/", causalbench_views.check_page, name="causalbench_check"),
    path(
        "p/<slug:slug>/causalbench/adjudication/",
        causalbench_views.adjudication_page,
        name="causalbench_adjudication",
    ),
    path(
        "p/<slug:slug>/causalbench/adjudication/<int:item_id>/",
        causalbench_views.adjudicate,
        name="causalbench_adjudicate",
    ),
    path("p/<slug:slug>/explica/", explica_views.explica_page, name="explica"),
    path("p/<slug:slug>/explica/aggregate/", explica_views.explica_aggregate_view, name="explica_aggregate"),
    path("p/<slug:slug>/explica/pairs/", explica_views.explica_pairs_view, name="explica_pairs"),
    path("p/<slug:slug>/explica/settings/", explica_views.explica_settings_view, name="explica_settings"),
    path(
        "p/<slug:slug>/explica/pairs/<int:group_id>/tie/", explica_views.explica_tie_view, name="explica_tie"
    ),
]
