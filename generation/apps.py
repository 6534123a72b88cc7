from django.apps import AppConfig
from django.db.models.signals import post_migrate


class GenerationConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "generation"

    def ready(self):
        from . import receivers  # noqa: F401 - connects the receivers
        from .item_actions import register_actions

        register_actions()

        post_migrate.connect(_endpoint_from_environment, sender=self, dispatch_uid="generation.env_endpoint")


def _endpoint_from_environment(sender, using="default", **kwargs):
    from .services import endpoint_from_environment

    if using == "default":
        endpoint_from_environment()
