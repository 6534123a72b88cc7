"""Migrations stand on their own: a fresh database is built from historical models and frozen data, and the
shipped prompt templates are loaded once per database by ``migrate``'s end, not by migrations."""

import ast
from pathlib import Path

import pytest
from django.apps import apps
from django.core.management.sql import emit_post_migrate_signal

ROOT = Path(__file__).resolve().parents[2]
PROJECT_APPS = [
    config
    for config in apps.get_app_configs()
    if Path(config.path).is_relative_to(ROOT) and "site-packages" not in Path(config.path).parts
]


def migration_files():
    for config in PROJECT_APPS:
        yield from sorted((Path(config.path) / "migrations").glob("0*.py"))


def imported_modules(path: Path):
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            yield node.module or ""


@pytest.mark.parametrize(
    "path", list(migration_files()), ids=lambda path: f"{path.parent.parent.name}/{path.name}"
)
def test_a_migration_imports_nothing_of_today_s_code_but_the_models_its_fields_name(path):
    """A model's field may name a default or a validator in ``<app>.models`` (Django writes that itself);
    anything else (a service, a loader, a YAML file) changes under a migration that must not change."""
    allowed_apps = {f"{config.name}.models" for config in PROJECT_APPS}
    for module in imported_modules(path):
        assert module.split(".")[0] in {"django", "decimal"} or module in allowed_apps, (
            f"{path.relative_to(ROOT)} imports {module}"
        )


@pytest.mark.django_db
def test_the_end_of_migrate_loads_each_prompt_file_once(monkeypatch):
    from generation.models import PromptTemplate
    from generation.services import templates

    PromptTemplate.objects.all().delete()
    reads = []
    read = templates.read_template_files
    monkeypatch.setattr(templates, "read_template_files", lambda *a, **kw: reads.append(1) or read(*a, **kw))

    emit_post_migrate_signal(verbosity=0, interactive=False, db="default")

    assert len(reads) == 1, "one reading of the prompt files per database"
    assert PromptTemplate.objects.count() == len(read(None))
    emit_post_migrate_signal(verbosity=0, interactive=False, db="default")
    assert set(PromptTemplate.objects.values_list("version", flat=True)) == {1}, "loading again adds nothing"
