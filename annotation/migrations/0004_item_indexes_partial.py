import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

# On SQLite the links' changes remake the table, which drops the SQLite index of migration 0002: made again.
SQLITE_PROJECT_ID = "CREATE INDEX IF NOT EXISTS item_project_id ON annotation_item (project_id, id)"


def project_id_index(apps, schema_editor):
    if schema_editor.connection.vendor == "sqlite":
        schema_editor.execute(SQLITE_PROJECT_ID)


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0003_item_search_vector"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.RemoveIndex(
            model_name="item",
            name="item_review_queue",
        ),
        migrations.AlterField(
            model_name="item",
            name="answer_author",
            field=models.ForeignKey(
                blank=True,
                db_constraint=False,
                db_index=False,
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="+",
                to=settings.AUTH_USER_MODEL,
            ),
        ),
        migrations.AlterField(
            model_name="item",
            name="group",
            field=models.ForeignKey(
                blank=True,
                db_constraint=False,
                db_index=False,
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="items",
                to="annotation.itemgroup",
            ),
        ),
        migrations.AlterField(
            model_name="item",
            name="topic",
            field=models.ForeignKey(
                blank=True,
                db_constraint=False,
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="items",
                to="annotation.topic",
            ),
        ),
        migrations.AddIndex(
            model_name="item",
            index=models.Index(
                condition=models.Q(("group__isnull", False)), fields=["group"], name="item_group"
            ),
        ),
        migrations.AddIndex(
            model_name="item",
            index=models.Index(
                models.F("project"),
                models.F("status"),
                models.OrderBy(models.F("round_disagreement"), descending=True),
                models.F("id"),
                condition=models.Q(("round_disagreement__isnull", False)),
                name="item_review_queue",
            ),
        ),
        migrations.RunPython(project_id_index, migrations.RunPython.noop),
    ]
