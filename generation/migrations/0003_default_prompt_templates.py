"""Load the default prompt templates shipped in generation/prompt_templates/ (English and Portuguese).

Later changes to those files are loaded as new versions by `python manage.py load_prompt_templates`
(or by a new data migration like this one); stored versions are never changed.
"""

from django.db import migrations


def load_default_templates(apps, schema_editor):
    from generation.services.templates import prompt_templates_load

    prompt_templates_load(model=apps.get_model("generation", "PromptTemplate"))


class Migration(migrations.Migration):
    dependencies = [("generation", "0002_endpoints_jobs_resume")]

    operations = [migrations.RunPython(load_default_templates, migrations.RunPython.noop)]
