"""ExpliCa's pages (in the ``designs`` namespace, under the project's address)."""

from django.urls import path

from . import views

urlpatterns = [
    path("p/<slug:slug>/explica/", views.explica_page, name="explica"),
    path("p/<slug:slug>/explica/aggregate/", views.explica_aggregate_view, name="explica_aggregate"),
    path("p/<slug:slug>/explica/pairs/", views.explica_pairs_view, name="explica_pairs"),
    path("p/<slug:slug>/explica/settings/", views.explica_settings_view, name="explica_settings"),
    path("p/<slug:slug>/explica/pairs/<int:group_id>/tie/", views.explica_tie_view, name="explica_tie"),
]
