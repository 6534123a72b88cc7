"""Shared code never names a design: the apps annotation, topics, generation and evaluation and the shared templates ask
the registries (``annotation.designs``, ``generation.kinds``) and never import a design's package, compare with a
design's key or include a design's template. Prose (docstrings, comments, help texts) may cite the papers."""

import ast
import re
from pathlib import Path

from django.conf import settings

SHARED_APPS = ("annotation", "topics", "generation", "evaluation")
ROOT = Path(settings.BASE_DIR)


def design_keys() -> list[str]:
    return [app.removeprefix("designs.") for app in settings.INSTALLED_APPS if app.startswith("designs.")]


def shared_python_files():
    for app in SHARED_APPS:
        for path in sorted((ROOT / app).rglob("*.py")):
            if "migrations" not in path.parts:
                yield path


def shared_templates():
    for folder in [ROOT / "templates", *(ROOT / app / "templates" for app in SHARED_APPS)]:
        yield from sorted(folder.rglob("*.html"))


def docstrings(tree) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def design_names_in(path: Path, keys: list[str]) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip = docstrings(tree)
    upper = {key.upper() for key in keys}
    found = []
    for node in ast.walk(tree):
        where = f"{path.relative_to(ROOT)}:{getattr(node, 'lineno', '?')}"
        if isinstance(node, ast.Import | ast.ImportFrom):
            if isinstance(node, ast.ImportFrom) and node.level:
                continue  # relative: annotation.designs, the registry
            modules = (
                [alias.name for alias in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            )
            if any(module == "designs" or module.startswith("designs.") for module in modules):
                found.append(f"{where} imports a design package")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip:
            if node.value in keys or any(node.value.startswith(f"designs/{key}/") for key in keys):
                found.append(f"{where} names {node.value!r}")
        elif isinstance(node, ast.Attribute) and node.attr in upper:
            found.append(f"{where} names {node.attr}")
    return found


def test_shared_python_modules_never_name_a_design():
    keys = design_keys()
    assert len(keys) >= 5
    found = [problem for path in shared_python_files() for problem in design_names_in(path, keys)]
    assert found == []


def test_shared_templates_never_branch_on_a_design_or_include_its_templates():
    keys = design_keys()
    alternatives = "|".join(keys)
    named = re.compile(rf"""["']({alternatives})["']|designs/({alternatives})/|designs:""")
    found = [
        f"{path.relative_to(ROOT)}: {match.group(0)}"
        for path in shared_templates()
        for match in named.finditer(path.read_text(encoding="utf-8"))
    ]
    assert found == []


def design_options() -> set[str]:
    """The names of the options the designs' job kinds declare (``JobKind.options``)."""
    from django.apps import apps

    from generation.kinds import job_kinds

    return {
        name
        for kind in job_kinds()
        if kind.options is not None
        and apps.get_containing_app_config(kind.options.__module__).name.startswith("designs.")
        for name in kind.options._declared_fields
    }


def test_the_shared_doors_take_a_designs_job_options_from_its_kind_and_name_none():
    from generation.serializers import JobCreateInputSerializer
    from generation.services.jobs import DEFAULT_OPTIONS

    options = design_options()
    assert {"group_ids", "voters", "domain", "double_prompt"} <= options
    assert options <= set(JobCreateInputSerializer().fields), "the API offers every kind's options"
    assert not options & set(JobCreateInputSerializer._declared_fields)
    assert not options & set(DEFAULT_OPTIONS)
    doors = ["generation/api.py", "generation/serializers.py", "generation/management/commands/generate.py"]
    doors += [
        "generation/services/jobs.py",
        "generation/kinds.py",
        "generation/forms.py",
        "generation/views.py",
    ]
    named = [
        f"{door}: {match.group(0)}"
        for door in doors
        for match in re.finditer(
            rf"\b({'|'.join(sorted(options))})\b", (ROOT / door).read_text(encoding="utf-8")
        )
    ]
    assert named == []


def test_each_kinds_prompts_are_in_the_folder_of_the_app_that_registers_it():
    from django.apps import apps

    from generation.kinds import job_kinds
    from generation.prompts import template_dirs

    misplaced = []
    for kind in job_kinds():
        home = Path(apps.get_containing_app_config(kind.work.__module__).path) / "prompt_templates"
        for folder in template_dirs():
            misplaced += [
                str(path.relative_to(ROOT)) for path in folder.glob(f"*/{kind.key}.*.yaml") if folder != home
            ]
    assert misplaced == []
