from django.apps import AppConfig


class MeterConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "designs.meter"
    label = "design_meter"
    verbose_name = "METER"

    def ready(self):
        from generation.models import PromptTemplate
        from generation.services.work import job_kind_register

        from . import design, work  # noqa: F401 - importing design registers it

        job_kind_register(PromptTemplate.Kind.DECONTAMINATION, work.DecontaminationWork)
        job_kind_register(PromptTemplate.Kind.METER_QUESTION, work.MeterQuestionWork)
