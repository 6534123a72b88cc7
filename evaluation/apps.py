from django.apps import AppConfig


class EvaluationConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "evaluation"

    def ready(self):
        from .runs.work import register

        register()  # the runs' model calls go through the generation runner
