from django.apps import AppConfig


class EvaluationConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "evaluation"

    def ready(self):
        from annotation.background import sweep_register

        from .runs.services import runs_resume_stale
        from .runs.work import register
        from .services import releases_resume_stale

        register()  # the runs' model calls go through the generation runner
        sweep_register("release builds started again", releases_resume_stale)
        sweep_register("evaluation runs resumed", runs_resume_stale)
