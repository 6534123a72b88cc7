"""Where the shipped prompt templates are: a ``prompt_templates/`` folder in any installed app.

Django finds each app's ``templates/``; prompt templates are found the same way, so an app (generation, evaluation,
each design) ships the prompts of the kinds it registers and no shared folder lists them.
"""

from pathlib import Path

from django.apps import apps

FOLDER = "prompt_templates"


def template_dirs() -> list[Path]:
    """Every installed app's ``prompt_templates/`` folder, in the order of ``INSTALLED_APPS``."""
    found = (Path(config.path) / FOLDER for config in apps.get_app_configs())
    return [directory for directory in found if directory.is_dir()]
