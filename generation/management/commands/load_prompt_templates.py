from django.core.management.base import BaseCommand, CommandError

from generation.services import TemplateProblem, prompt_templates_load


class Command(BaseCommand):
    help = (
        "Load the default prompt templates (generation/prompt_templates/). A template whose text or schema "
        "changed becomes a new version; stored versions are never changed."
    )

    def handle(self, *args, **options):
        try:
            report = prompt_templates_load()
        except TemplateProblem as exc:
            raise CommandError(str(exc)) from exc
        for template in report.created:
            self.stdout.write(f"new: {template}")
        self.stdout.write(
            self.style.SUCCESS(f"{len(report.created)} new version(s), {report.unchanged} unchanged")
        )
