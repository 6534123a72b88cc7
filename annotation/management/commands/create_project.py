"""``manage.py create_project SLUG NAME --design meter --owner alice``: a new project with its design's defaults."""

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from annotation.designs import design_for, designs
from annotation.models import default_design
from annotation.projects import project_create


class Command(BaseCommand):
    help = "Create a project of one of the benchmark designs; the owner (a username) becomes its owner."

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("name")
        parser.add_argument(
            "--design", choices=[design.key for design in designs()], default=default_design()
        )
        parser.add_argument(
            "--language",
            default=None,
            help="of the items (default: the design's, e.g. en for ExpliCa, else pt-BR)",
        )
        parser.add_argument("--description", default="")
        parser.add_argument("--owner", help="username of the project's owner")

    def handle(self, *args, **options):
        owner = None
        if options["owner"]:
            owner = get_user_model().objects.filter(username=options["owner"]).first()
            if owner is None:
                raise CommandError(f"No user named {options['owner']!r}.")
        try:
            project = project_create(
                name=options["name"],
                slug=options["slug"],
                design=options["design"],
                language=options["language"],
                description=options["description"],
                created_by=owner,
            )
        except ValidationError as error:
            raise CommandError(
                "; ".join(f"{field}: {' '.join(msgs)}" for field, msgs in error.message_dict.items())
            ) from None
        design = design_for(project)
        self.stdout.write(
            self.style.SUCCESS(f"Created {project.slug} ({design.name}, {project.answer_format}).")
        )
