from django.apps import AppConfig


class MeterConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "designs.meter"
    label = "design_meter"
    verbose_name = "METER"
