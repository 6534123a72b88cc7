"""API tokens move to core from evaluation, rows and tables as they are: the state learns the model here,
the database keeps its tables (``evaluation_apitoken`` and its projects), and evaluation 0016 forgets it."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        ("annotation", "0001_initial"),
        # The table is created and last changed by evaluation's history.
        ("evaluation", "0001_initial"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="ApiToken",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID"),
                        ),
                        ("name", models.CharField(blank=True, max_length=100, verbose_name="name")),
                        (
                            "prefix",
                            models.CharField(
                                help_text="The first characters of the key, to recognise it.", max_length=16
                            ),
                        ),
                        ("key_hash", models.CharField(max_length=64, unique=True)),
                        ("created", models.DateTimeField(auto_now_add=True)),
                        ("expires_at", models.DateTimeField(verbose_name="expires")),
                        ("revoked_at", models.DateTimeField(blank=True, null=True, verbose_name="revoked")),
                        ("last_used_at", models.DateTimeField(blank=True, null=True, verbose_name="last used")),
                        (
                            "issued_by",
                            models.ForeignKey(
                                blank=True,
                                null=True,
                                on_delete=django.db.models.deletion.SET_NULL,
                                related_name="+",
                                to=settings.AUTH_USER_MODEL,
                            ),
                        ),
                        (
                            "projects",
                            models.ManyToManyField(
                                db_table="evaluation_apitoken_projects",
                                related_name="api_tokens",
                                to="annotation.project",
                            ),
                        ),
                        (
                            "user",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="api_tokens",
                                to=settings.AUTH_USER_MODEL,
                            ),
                        ),
                    ],
                    options={
                        "verbose_name": "API token",
                        "verbose_name_plural": "API tokens",
                        "db_table": "evaluation_apitoken",
                        "ordering": ["-created", "-id"],
                    },
                ),
            ],
            database_operations=[],
        ),
    ]
