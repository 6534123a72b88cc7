from django.apps import AppConfig


class CausalBenchConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "designs.causalbench"
    label = "design_causalbench"
    verbose_name = "CausalBench"

    def ready(self):
        from generation.services.work import job_kind_register

        from . import design  # noqa: F401 - registers the design
        from .work import CAUSALBENCH_WORK

        for kind, work_class in CAUSALBENCH_WORK.items():
            job_kind_register(kind, work_class)
