from django.apps import AppConfig


class ExplicaConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "designs.explica"
    label = "design_explica"
    verbose_name = "ExpliCa"
