from django.urls import path

from . import views

app_name = "annotation"

urlpatterns = [
    path("", views.home, name="home"),
    path("healthz", views.healthz, name="healthz"),
    path("p/<slug:slug>/", views.project_detail, name="project_detail"),
    path("p/<slug:slug>/imports/", views.import_list, name="import_list"),
    path("p/<slug:slug>/imports/<int:batch_id>/", views.import_detail, name="import_detail"),
    path("p/<slug:slug>/imports/<int:batch_id>/dropped.csv", views.import_dropped_csv, name="import_dropped_csv"),
]
