from django.core.management.base import BaseCommand

from annotation.demo import DEMO_USERS, demo_load


class Command(BaseCommand):
    help = "Create the demo project, its users, a round of judgments and some gold items (idempotent)."

    def handle(self, *args, **options):
        result = demo_load()
        if result.created:
            self.stdout.write(self.style.SUCCESS(f"Demo project created: {result.project.name}"))
        else:
            self.stdout.write(f"Demo project already there: {result.project.name}")
        self.stdout.write("Demo accounts (username / password):")
        for username, password, role, _ in DEMO_USERS:
            self.stdout.write(f"  {username:<11} / {password:<11} {role}")
