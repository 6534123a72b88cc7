"""The items page in id order on SQLite: an index of (project, id), along which a page of 50 is the first 50
matches of whatever filter, found without reading the rest. Without it SQLite read every item of the project
through another index and sorted them all for each page (60–110 ms at 100,000 items, against under 1 ms).
PostgreSQL walks its primary key for the same pages already (measured: no change), so it does without the
index and its cost on every import."""

from django.db import migrations

CREATE = "CREATE INDEX IF NOT EXISTS item_project_id ON annotation_item (project_id, id)"
DROP = "DROP INDEX IF EXISTS item_project_id"


def create(apps, schema_editor):
    if schema_editor.connection.vendor == "sqlite":
        schema_editor.execute(CREATE)


def drop(apps, schema_editor):
    if schema_editor.connection.vendor == "sqlite":
        schema_editor.execute(DROP)


class Migration(migrations.Migration):
    dependencies = [("annotation", "0016_background_work_fields")]

    operations = [migrations.RunPython(create, drop)]
