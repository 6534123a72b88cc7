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


def peak_mb() -> float:
    """This process's peak resident memory so far, in MB (Linux reports KiB)."""
    import resource

    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
