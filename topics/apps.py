from django.apps import AppConfig


class TopicsConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "topics"

    def ready(self):
        from core.background import sweep_register

        from .item_actions import register_actions
        from .run import topic_runs_fail_stale_everywhere

        register_actions()
        sweep_register("topic runs failed", topic_runs_fail_stale_everywhere)
