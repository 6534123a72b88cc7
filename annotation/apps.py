from django.apps import AppConfig


class AnnotationConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "annotation"

    def ready(self):
        from . import preferences  # noqa: F401 - copies a person's preferences into the session at sign-in
