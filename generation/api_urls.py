from django.urls import path

from . import api

urlpatterns = [
    path("projects/<slug:slug>/jobs/", api.JobListCreateApi.as_view(), name="api-job-list"),
    path("projects/<slug:slug>/jobs/<int:job_id>/", api.JobDetailApi.as_view(), name="api-job-detail"),
    path("projects/<slug:slug>/jobs/<int:job_id>/cancel/", api.JobCancelApi.as_view(), name="api-job-cancel"),
    path("projects/<slug:slug>/jobs/<int:job_id>/retry/", api.JobRetryApi.as_view(), name="api-job-retry"),
    path("projects/<slug:slug>/jobs/<int:job_id>/calls/", api.JobCallListApi.as_view(), name="api-job-calls"),
    path("projects/<slug:slug>/model-endpoints/", api.EndpointListApi.as_view(), name="api-endpoint-list"),
    path("prompt-templates/", api.TemplateListApi.as_view(), name="api-template-list"),
]
