from django.apps import AppConfig


class AnnotationConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "annotation"

    def ready(self):
        from core.background import sweep_register

        from .importing import imports_resume_stale

        sweep_register("imports resumed or failed", imports_resume_stale)

        from . import preferences  # noqa: F401 - copies a person's preferences into the session at sign-in
