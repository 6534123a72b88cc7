from django.apps import AppConfig
from django.db.models.signals import post_migrate


class GenerationConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "generation"

    def ready(self):
        from django.utils.module_loading import autodiscover_modules

        from core.background import sweep_register

        from .item_actions import register_actions

        register_actions()

        from . import receivers  # noqa: F401 - connects the receivers
        from .forms import core_job_pages
        from .kinds import CallKind, call_kind_register, job_kind_register, job_page_register
        from .models import PromptTemplate
        from .services.jobs import core_job_kinds, jobs_resume_stale

        sweep_register("generation jobs resumed", jobs_resume_stale)

        # templates of no kind the runner makes: stored and versioned, used by hand
        call_kind_register(CallKind(key=PromptTemplate.Kind.OTHER, label=PromptTemplate.Kind.OTHER.label))
        for kind in core_job_kinds():
            job_kind_register(kind)
        for page in core_job_pages():
            job_page_register(page)
        autodiscover_modules("jobs")  # each design app's ``jobs`` module registers its kinds and cards
        post_migrate.connect(_endpoint_from_environment, sender=self, dispatch_uid="generation.env_endpoint")
        post_migrate.connect(_prompt_templates_sync, sender=self, dispatch_uid="generation.prompt_templates")

        from annotation.importing.preview import model_names_register

        from .selectors import endpoint_names

        model_names_register(endpoint_names)


def _endpoint_from_environment(sender, using="default", **kwargs):
    from .services import endpoint_from_environment

    if using == "default":
        endpoint_from_environment()


def _prompt_templates_sync(sender, using="default", **kwargs):
    """The shipped prompt templates, once per database at the end of ``migrate`` (and after a test flush): a
    changed file becomes a new version, an unchanged one costs a comparison."""
    from django.db import connections

    from .models import PromptTemplate
    from .services import prompt_templates_load

    if (
        PromptTemplate._meta.db_table in connections[using].introspection.table_names()
    ):  # not on a partial migrate
        prompt_templates_load(using=using)
