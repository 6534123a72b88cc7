from django.apps import AppConfig


class CausalBenchConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "designs.causalbench"
    label = "design_causalbench"
    verbose_name = "CausalBench"
