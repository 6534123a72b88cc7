from django.apps import AppConfig


class EvaluationConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "evaluation"

    def ready(self):
        from django.db.models.signals import post_delete

        from annotation.label_models import label_models_register
        from core.background import sweep_register

        from .models import Release
        from .quality.provider import LabelModelsProvider
        from .releases.archive import archives_go_with_their_release
        from .runs.results_import import results_imports_resume_stale
        from .runs.services import runs_resume_stale
        from .runs.work import register
        from .services import releases_resume_stale

        register()  # the runs' model calls go through the generation runner
        sweep_register("release builds started again", releases_resume_stale)
        sweep_register("evaluation runs resumed", runs_resume_stale)
        sweep_register("results imports resumed or failed", results_imports_resume_stale)
        post_delete.connect(archives_go_with_their_release, sender=Release)
        label_models_register(LabelModelsProvider())  # annotation's queue and review page ask through it

        from annotation.demo import demo_release_register

        from .services import demo_release

        demo_release_register(demo_release)
