"""Load the CausalityCheck checklist prompt templates (generation/prompt_templates/*/checklist.*.yaml)."""

from django.db import migrations


def load_templates(apps, schema_editor):
    from generation.services.templates import prompt_templates_load

    prompt_templates_load(model=apps.get_model("generation", "PromptTemplate"))


class Migration(migrations.Migration):
    dependencies = [("generation", "0006_checklist_prompt_kind")]

    operations = [migrations.RunPython(load_templates, migrations.RunPython.noop)]
