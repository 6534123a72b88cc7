from django.core.management.base import BaseCommand

from annotation.management.lookup import project_or_error
from annotation.queue import assignments_release_expired


class Command(BaseCommand):
    help = (
        "Give the places of abandoned assignments (past the project's timeout) back to the queue. "
        "The queue also does this whenever someone asks for an item; this is for a periodic job."
    )

    def add_arguments(self, parser):
        parser.add_argument("--project", help="only this project (its slug)")

    def handle(self, *args, **options):
        project = None
        if options["project"]:
            project = project_or_error(options["project"])
        released = assignments_release_expired(project=project)
        self.stdout.write(f"{released} expired assignment(s) released")
