"""The item's project link is checked once per import, under lock, instead of per row at commit: the link
carries no database constraint (``annotation.importing.service``)."""

import django.db.models.deletion
from django.db import migrations, models

# On SQLite the link's change remakes the table, which drops the SQLite index of migration 0002: made again.
SQLITE_PROJECT_ID = "CREATE INDEX IF NOT EXISTS item_project_id ON annotation_item (project_id, id)"


def project_id_index(apps, schema_editor):
    if schema_editor.connection.vendor == "sqlite":
        schema_editor.execute(SQLITE_PROJECT_ID)


class Migration(migrations.Migration):
    dependencies = [("annotation", "0007_topic_moves_to_topics")]

    operations = [
        migrations.AlterField(
            model_name="item",
            name="project",
            field=models.ForeignKey(
                db_constraint=False,
                db_index=False,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="items",
                to="annotation.project",
            ),
        ),
        migrations.RunPython(project_id_index, migrations.RunPython.noop),
    ]
