from django.apps import AppConfig


class AnnotationConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "annotation"

    def ready(self):
        from django.utils.module_loading import autodiscover_modules

        autodiscover_modules("design")  # each design app's ``design`` module registers its ProjectDesign
        from core.background import sweep_register

        from .importing import imports_resume_stale
        from .search import search_backlogs_resume

        sweep_register("imports resumed or failed", imports_resume_stale)
        sweep_register("search indexing resumed", search_backlogs_resume)

        from django.db.models.signals import post_save

        from .models import Item
        from .search import item_saved

        post_save.connect(item_saved, sender=Item, dispatch_uid="annotation.search.item_saved")

        from .item_actions import bulk_runs_fail_stale

        sweep_register("bulk actions failed", bulk_runs_fail_stale)

        from . import preferences  # noqa: F401 - copies a person's preferences into the session at sign-in
