from django.apps import AppConfig


class ProverbsConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "tests.designs.proverbs"
    label = "design_proverbs"
    verbose_name = "Provérbios"
