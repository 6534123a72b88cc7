"""Load the benchmark-answer templates (open, multiple choice, yes/no) and the judge template that
justifies each criterion; existing versions stay as they are."""

from django.db import migrations


def load_default_templates(apps, schema_editor):
    from generation.services.templates import prompt_templates_load

    prompt_templates_load(model=apps.get_model("generation", "PromptTemplate"))


class Migration(migrations.Migration):
    dependencies = [("generation", "0007_checklist_prompt_templates")]

    operations = [migrations.RunPython(load_default_templates, migrations.RunPython.noop)]
