"""The topic belongs to the topics app now (topics 0001): annotation forgets the model and points the item's topic
at it there; the table, its rows and the item's column stay as they are."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0006_importbatch_writing"),
        ("topics", "0001_initial"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="item",
                    name="topic",
                    field=models.ForeignKey(
                        blank=True,
                        db_constraint=False,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="items",
                        to="topics.topic",
                    ),
                ),
                migrations.DeleteModel(name="Topic"),
            ],
            database_operations=[],
        ),
    ]
