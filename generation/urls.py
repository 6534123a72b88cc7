from django.urls import path

from . import views

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
]
