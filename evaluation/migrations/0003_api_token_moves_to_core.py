"""API tokens belong to core now (core 0001): evaluation forgets the model, the tables and rows stay, and the
content type follows so permissions and admin history name the model where it lives."""

from django.db import migrations


def content_type_to(source: str, target: str):
    def move(apps, schema_editor):
        ContentType = apps.get_model("contenttypes", "ContentType")
        if not ContentType.objects.filter(app_label=target, model="apitoken").exists():
            ContentType.objects.filter(app_label=source, model="apitoken").update(app_label=target)

    return move


class Migration(migrations.Migration):
    dependencies = [
        ("contenttypes", "0002_remove_content_type_name"),
        ("core", "0001_initial"),
        ("evaluation", "0002_results_import"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[migrations.DeleteModel(name="ApiToken")],
            database_operations=[],
        ),
        migrations.RunPython(content_type_to("evaluation", "core"), content_type_to("core", "evaluation")),
    ]
