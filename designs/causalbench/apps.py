from django.apps import AppConfig


class CausalBenchConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "designs.causalbench"
    label = "design_causalbench"
    verbose_name = "CausalBench"

    def ready(self):
        from generation.kinds import job_kind_register, job_page_register

        from . import design  # noqa: F401 - registers the design
        from .jobs import JOB_KINDS, JOB_PAGES

        for kind in JOB_KINDS:
            job_kind_register(kind)
        for page in JOB_PAGES:
            job_page_register(page)
