"""CausalityCheck asks its class as one question per task (``causal_class:<task>``): a control item's known
class moves to its task's question, so control items marked before keep seeding the right model."""

from django.db import migrations

TASKS = ("op", "aj", "pj", "cva")


def forwards(apps, schema_editor):
    Item = apps.get_model("annotation", "Item")
    controls = Item.objects.filter(project__design="causalitycheck", control_answers__isnull=False)
    for item in controls.iterator():
        answers = dict(item.control_answers or {})
        task = (item.metadata or {}).get("task")
        if task in TASKS and "causal_class" in answers:
            answers[f"causal_class:{task}"] = answers.pop("causal_class")
            Item.objects.filter(pk=item.pk).update(control_answers=answers)


def backwards(apps, schema_editor):
    Item = apps.get_model("annotation", "Item")
    controls = Item.objects.filter(project__design="causalitycheck", control_answers__isnull=False)
    for item in controls.iterator():
        answers = dict(item.control_answers or {})
        keys = [key for key in answers if key.startswith("causal_class:")]
        for key in keys:
            answers["causal_class"] = answers.pop(key)
        if keys:
            Item.objects.filter(pk=item.pk).update(control_answers=answers)


class Migration(migrations.Migration):
    dependencies = [("annotation", "0009_itemgroup_import_batch")]

    operations = [migrations.RunPython(forwards, backwards)]
