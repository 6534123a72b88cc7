from django.apps import AppConfig


class CausalQaPtConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "designs.causal_qa_pt"
    label = "design_causal_qa_pt"
    verbose_name = "Causal_QA.PT"
