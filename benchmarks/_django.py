"""Set up Django for a benchmark script: its own SQLite file unless DATABASE_URL is given."""

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def setup(name: str, migrate: bool = True) -> None:
    """``migrate=False`` for a child process that reuses the database its parent prepared."""
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "causalqa_site.settings")
    if not os.environ.get("DATABASE_URL") and migrate:
        (ROOT / "var").mkdir(exist_ok=True)
        path = ROOT / "var" / f"bench-{name}.sqlite3"
        for suffix in ("", "-wal", "-shm"):
            Path(f"{path}{suffix}").unlink(missing_ok=True)
        os.environ["DATABASE_URL"] = f"sqlite:///{path}"
    import django

    django.setup()
    from django.core.management import call_command

    if not migrate:
        return
    _create_postgres_database_if_missing()

    call_command("migrate", verbosity=0, interactive=False)


def database_label() -> str:
    from django.db import connection

    return connection.vendor


def _create_postgres_database_if_missing() -> None:
    from django.db import connection

    if connection.vendor != "postgresql":
        return
    import psycopg

    params = connection.get_connection_params()
    name = params.pop("dbname")
    params.pop("cursor_factory", None)
    params.pop("context", None)
    params.pop("prepare_threshold", None)
    with psycopg.connect(**{**params, "dbname": "postgres"}, autocommit=True) as admin:
        if not admin.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone():
            admin.execute(f'CREATE DATABASE "{name}"')


def drop_project(slug: str) -> None:
    """Remove an earlier run's project with plain SQL deletes (the ORM would load every row first)."""
    from django.db import connection

    from annotation.models import Project

    project = Project.objects.filter(slug=slug).first()
    if project is None:
        return
    items = "SELECT id FROM annotation_item WHERE project_id = %s"
    with connection.cursor() as cursor:
        for table in (
            "annotation_judgment",
            "annotation_assignment",
            "annotation_revision",
            "annotation_option",
            "annotation_curationdecision",
        ):
            cursor.execute(f"DELETE FROM {table} WHERE item_id IN ({items})", [project.pk])
        cursor.execute("DELETE FROM annotation_item WHERE project_id = %s", [project.pk])
    project.delete()


def peak_mb() -> float:
    """This process's peak resident memory so far, in MB. On Linux from /proc (VmHWM): ru_maxrss carries the
    parent's peak over fork and exec, so a child started by a benchmark that built 300 MB of data would report
    300 MB whatever it used."""
    import resource

    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        pass
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
