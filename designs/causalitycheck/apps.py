from django.apps import AppConfig


class CausalityCheckConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "designs.causalitycheck"
    label = "design_causalitycheck"
    verbose_name = "CausalityCheck"
