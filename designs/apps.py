from django.apps import AppConfig


class DesignsConfig(AppConfig):
    """The pages of the designs (``designs.urls``); each design is an app of its own (``designs.<key>``)."""

    default_auto_field = "django.db.models.BigAutoField"
    name = "designs"
    verbose_name = "Benchmark designs"
