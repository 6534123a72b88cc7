from django.apps import AppConfig


class CausalityCheckConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "designs.causalitycheck"
    label = "design_causalitycheck"
    verbose_name = "CausalityCheck"

    def ready(self):
        from generation.kinds import job_kind_register, job_page_register

        from . import design  # noqa: F401 - registers the design
        from .jobs import JOB_KINDS, JOB_PAGES

        for kind in JOB_KINDS:
            job_kind_register(kind)
        for page in JOB_PAGES:
            job_page_register(page)
