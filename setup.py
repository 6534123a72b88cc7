"""The wheel also carries the site's shared templates, static files and translations (``templates/``,
``static/``, ``locale/``, and the documentation's ``docs/`` at the top of the checkout), copied into ``causalqa_site/site_files/`` so an
installed package serves its pages without the checkout; ``causalqa_site/settings.py`` looks there when the
checkout's folders are absent. Everything else is in pyproject.toml."""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

SITE_FILES = ("templates", "static", "locale", "docs")


class BuildWithSiteFiles(build_py):
    def run(self):
        super().run()
        if self.editable_mode:
            return
        target = Path(self.build_lib) / "causalqa_site" / "site_files"
        for name in SITE_FILES:
            source = Path(__file__).parent / name
            if source.is_dir():
                shutil.copytree(
                    source,
                    target / name,
                    dirs_exist_ok=True,
                    ignore=shutil.ignore_patterns("node_modules", "__pycache__", "*.pyc"),
                )


setup(cmdclass={"build_py": BuildWithSiteFiles})
