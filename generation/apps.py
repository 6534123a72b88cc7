from django.apps import AppConfig
from django.db.models.signals import post_migrate


class GenerationConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "generation"

    def ready(self):
        from core.background import sweep_register

        from .item_actions import register_actions

        register_actions()

        from . import receivers  # noqa: F401 - connects the receivers
        from .forms import core_job_pages
        from .kinds import job_kind_register, job_page_register
        from .services.jobs import core_job_kinds, jobs_resume_stale
        from .topics.run import topic_runs_fail_stale_everywhere

        sweep_register("generation jobs resumed", jobs_resume_stale)
        sweep_register("topic runs failed", topic_runs_fail_stale_everywhere)

        for kind in core_job_kinds():
            job_kind_register(kind)
        for page in core_job_pages():
            job_page_register(page)
        post_migrate.connect(_endpoint_from_environment, sender=self, dispatch_uid="generation.env_endpoint")

        from annotation.importing.preview import model_names_register

        from .selectors import endpoint_names

        model_names_register(endpoint_names)


def _endpoint_from_environment(sender, using="default", **kwargs):
    from .services import endpoint_from_environment

    if using == "default":
        endpoint_from_environment()
