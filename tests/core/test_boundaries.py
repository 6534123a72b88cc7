"""``core`` is the ground floor: it imports no app, and what depends on the database vendor or on the ORM's
internals lives in it alone (``core.db``), each with the plain ORM's answer beside it."""

import ast
from pathlib import Path

import pytest
from django.db.models.query import QuerySet

ROOT = Path(__file__).resolve().parents[2]
APPS = ("annotation", "topics", "generation", "evaluation", "designs")
OUTSIDE_CORE = (*APPS, "causalqa_site")
# Members of a queryset that are no part of Django's public API, and the HTTP pool's that httpx has no argument
# for (``core.http``).
QUERYSET_PRIVATE = {
    name for name in {*dir(QuerySet), *vars(QuerySet())} if name.startswith("_") and not name.endswith("__")
}
HTTP_PRIVATE = {"_pool", "_network_backend"}


def modules(package: str, *, migrations: bool = True):
    for path in sorted((ROOT / package).rglob("*.py")):
        if migrations or "migrations" not in path.parts:
            yield path, ast.parse(path.read_text(), filename=str(path))


def imported(tree, *, at_import_time: bool = False) -> list[tuple[int, str]]:
    """Every module an ``import`` names, at any depth (a function's import counts too), or only those that run
    when the module loads (not inside a function)."""
    names = []
    for node in _walk(
        tree, skip=(ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda) if at_import_time else ()
    ):
        if isinstance(node, ast.Import):
            names += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.append((node.lineno, node.module))
    return names


def _walk(node, skip):
    yield node
    for child in ast.iter_child_nodes(node):
        if not isinstance(child, skip):
            yield from _walk(child, skip)


def test_core_imports_no_app_nor_the_site_package():
    reached = [
        f"{path.relative_to(ROOT)}:{line} {name}"
        for path, tree in modules("core")
        for line, name in imported(tree)
        if name.split(".")[0] in OUTSIDE_CORE
    ]
    assert reached == []


def test_the_site_package_imports_no_app_when_it_loads():
    """Settings name apps by dotted strings; a module-level import would load an app before Django has."""
    reached = [
        f"{path.relative_to(ROOT)}:{line} {name}"
        for path, tree in modules("causalqa_site")
        for line, name in imported(tree, at_import_time=True)
        if name.split(".")[0] in APPS
    ]
    assert reached == []


@pytest.mark.parametrize("package", OUTSIDE_CORE)
def test_no_module_outside_core_branches_on_the_database_vendor_or_reaches_into_private_members(package):
    """Migrations excepted: they are history, and stand on their own without importing live code."""
    found = []
    for path, tree in modules(package, migrations=False):
        where = path.relative_to(ROOT)
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr == "vendor":
                found.append(f"{where}:{node.lineno} .vendor")
            elif isinstance(node, ast.Attribute) and node.attr in QUERYSET_PRIVATE | HTTP_PRIVATE:
                found.append(f"{where}:{node.lineno} .{node.attr}")
        for line, name in imported(tree):
            if name.startswith(("django.db.models.query", "django.db.models.sql")):
                found.append(f"{where}:{line} import {name}")
    assert found == []


def test_the_checks_see_what_they_look_for():
    """The scans above find a vendor branch, a private queryset member and an app import when there is one."""
    tree = ast.parse(
        "from annotation.models import Item\n"
        "def f(connection, rows):\n"
        "    from django.db.models.query import get_related_populators\n"
        "    return connection.vendor == 'sqlite' and rows._result_cache\n"
    )
    assert [name for _, name in imported(tree)] == ["annotation.models", "django.db.models.query"]
    assert [name for _, name in imported(tree, at_import_time=True)] == ["annotation.models"]
    attributes = {node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)}
    assert {"vendor", "_result_cache"} <= attributes and "_result_cache" in QUERYSET_PRIVATE
