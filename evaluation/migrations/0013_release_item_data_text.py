"""A frozen record's column becomes ``text`` on PostgreSQL (``FrozenRecordField.db_type``): it was ``json``, whose
syntax check of every record cost server time at each cut. The field's definition in Django does not change, so
the autodetector sees nothing: this migration alters the column itself. On SQLite the column was text already."""

from django.db import migrations

COLUMN_TYPE = 'ALTER TABLE "evaluation_releaseitem" ALTER COLUMN "data" TYPE {kind} USING "data"::{kind}'


def to_text(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(COLUMN_TYPE.format(kind="text"))


def to_json(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(COLUMN_TYPE.format(kind="json"))


class Migration(migrations.Migration):
    dependencies = [("evaluation", "0012_release_items_lighter")]

    operations = [migrations.RunPython(to_text, to_json)]
