"""Pages of individual designs (namespace ``designs``), under the project's address like the annotation pages.

Each app that brings a design may bring a ``urls`` module; its ``urlpatterns`` are found here, in the order of
``INSTALLED_APPS``, so a new design's pages need no line in a shared file.
"""

from importlib import import_module

from django.apps import apps
from django.utils.module_loading import module_has_submodule

from annotation.designs import designs

app_name = "designs"


def design_url_modules() -> list:
    """The ``urls`` modules of the apps that register a design."""
    names = {apps.get_containing_app_config(type(design).__module__) for design in designs()}
    return [
        import_module(f"{config.name}.urls")
        for config in apps.get_app_configs()
        if config in names and module_has_submodule(config.module, "urls")
    ]


urlpatterns = [pattern for module in design_url_modules() for pattern in module.urlpatterns]
