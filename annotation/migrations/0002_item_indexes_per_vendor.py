"""Indexes of the items page (annotation.item_browser) that only one database vendor wants, which the
autodetector cannot write.

On PostgreSQL: full-text search over question, answer and context with the Portuguese configuration (GIN),
metadata containment (GIN), and the order by disagreement (an expression). The expressions are spelled as
``annotation.item_browser`` spells them (SEARCH_DOCUMENT, DISAGREEMENT_SORT_KEY): PostgreSQL uses an expression
index only for a query that spells the expression the same way. Other databases search with LIKE.

On SQLite: (project, id), along which a page of items in id order is the first matches of whatever filter,
found without reading the rest of the project's items; without it SQLite sorts every item of the project for
each page. PostgreSQL walks its primary key for those pages already, so it does without the index and its cost
on every import.
"""

from django.db import migrations

POSTGRESQL = [
    (
        "CREATE INDEX IF NOT EXISTS item_search_pt ON annotation_item USING gin ("
        "to_tsvector('portuguese'::regconfig, question || ' ' || reference_answer || ' ' || context))",
        "DROP INDEX IF EXISTS item_search_pt",
    ),
    (
        "CREATE INDEX IF NOT EXISTS item_metadata ON annotation_item USING gin (metadata)",
        "DROP INDEX IF EXISTS item_metadata",
    ),
    (
        "CREATE INDEX IF NOT EXISTS item_project_disagreement ON annotation_item "
        "(project_id, (COALESCE(round_disagreement, -1)), id)",
        "DROP INDEX IF EXISTS item_project_disagreement",
    ),
]
SQLITE = [
    (
        "CREATE INDEX IF NOT EXISTS item_project_id ON annotation_item (project_id, id)",
        "DROP INDEX IF EXISTS item_project_id",
    ),
]
BY_VENDOR = {"postgresql": POSTGRESQL, "sqlite": SQLITE}


def create(apps, schema_editor):
    for sql, _ in BY_VENDOR.get(schema_editor.connection.vendor, []):
        schema_editor.execute(sql)


def drop(apps, schema_editor):
    for _, sql in BY_VENDOR.get(schema_editor.connection.vendor, []):
        schema_editor.execute(sql)


class Migration(migrations.Migration):
    dependencies = [("annotation", "0001_initial")]

    operations = [migrations.RunPython(create, drop)]
