"""CausalBench's pages (in the ``designs`` namespace, under the project's address)."""

from django.urls import path

from . import views

urlpatterns = [
    path("p/<slug:slug>/causalbench/check/", views.check_page, name="causalbench_check"),
    path("p/<slug:slug>/causalbench/adjudication/", views.adjudication_page, name="causalbench_adjudication"),
    path(
        "p/<slug:slug>/causalbench/adjudication/<int:item_id>/",
        views.adjudicate,
        name="causalbench_adjudicate",
    ),
]
