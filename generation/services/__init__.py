"""Writes of the generation app, shared by pages, the API, Celery tasks and commands."""

from .endpoints import (
    api_key_is_set,
    endpoint_config,
    endpoint_create,
    endpoint_from_environment,
    endpoint_test_connection,
    endpoint_update,
    limiter_for,
)
from .jobs import (
    JobInvalid,
    endpoint_usable,
    job_cancel,
    job_claim,
    job_create,
    job_enqueue,
    job_request_revision,
    job_retry_failed,
    jobs_resume_stale,
    new_owner_token,
    revision_endpoint_for,
)
from .runner import job_run
from .templates import TemplateProblem, prompt_template_add_version, prompt_templates_load, template_latest

__all__ = [
    "JobInvalid",
    "TemplateProblem",
    "api_key_is_set",
    "endpoint_config",
    "endpoint_create",
    "endpoint_from_environment",
    "endpoint_test_connection",
    "endpoint_update",
    "endpoint_usable",
    "job_cancel",
    "job_claim",
    "job_create",
    "job_enqueue",
    "job_request_revision",
    "job_retry_failed",
    "job_run",
    "jobs_resume_stale",
    "limiter_for",
    "new_owner_token",
    "prompt_template_add_version",
    "prompt_templates_load",
    "revision_endpoint_for",
    "template_latest",
]
