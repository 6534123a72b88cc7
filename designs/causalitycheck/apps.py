from django.apps import AppConfig


class CausalityCheckConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "designs.causalitycheck"
    label = "design_causalitycheck"
    verbose_name = "CausalityCheck"

    def ready(self):
        from generation.models import PromptTemplate
        from generation.services.work import job_kind_register

        from . import design  # noqa: F401 - registers the design
        from .work import ChecklistWork

        job_kind_register(PromptTemplate.Kind.CHECKLIST, ChecklistWork)
