"""Indexes of the items page (annotation.item_browser). Everywhere: the order by last change. On PostgreSQL
only: full-text search over question, answer and context with the Portuguese configuration (GIN), metadata
containment (GIN), and the order by disagreement (an expression). Other databases search with LIKE."""

from django.db import migrations, models

# The same expression as annotation.item_browser.SEARCH_DOCUMENT: PostgreSQL uses the index only for it.
# The same expressions as annotation.item_browser (SEARCH_DOCUMENT, DISAGREEMENT_SORT_KEY): PostgreSQL uses
# an expression index only for a query that spells the expression the same way.
CREATE = [
    "CREATE INDEX IF NOT EXISTS item_search_pt ON annotation_item USING gin ("
    "to_tsvector('portuguese'::regconfig, question || ' ' || reference_answer || ' ' || context))",
    "CREATE INDEX IF NOT EXISTS item_metadata ON annotation_item USING gin (metadata)",
    "CREATE INDEX IF NOT EXISTS item_project_disagreement ON annotation_item "
    "(project_id, (COALESCE(round_disagreement, -1)), id)",
]
DROP = ["DROP INDEX IF EXISTS item_search_pt", "DROP INDEX IF EXISTS item_metadata",
        "DROP INDEX IF EXISTS item_project_disagreement"]


def create(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        for sql in CREATE:
            schema_editor.execute(sql)


def drop(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        for sql in DROP:
            schema_editor.execute(sql)


class Migration(migrations.Migration):
    dependencies = [("annotation", "0008_project_local_models")]

    operations = [
        migrations.AddIndex(
            model_name="item",
            index=models.Index(fields=["project", "updated_at", "id"], name="item_project_updated"),
        ),
        migrations.RunPython(create, drop),
    ]
