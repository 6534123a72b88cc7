from django.core.management.base import BaseCommand

from annotation.demo import DEMO_USERS, demo_load_all


class Command(BaseCommand):
    help = "Create one demo project per design with its example dataset, and the demo users (idempotent)."

    def handle(self, *args, **options):
        for result in demo_load_all():
            if result.created:
                self.stdout.write(self.style.SUCCESS(f"Demo project created: {result.project.name}"))
            else:
                self.stdout.write(f"Demo project already there: {result.project.name}")
        self.stdout.write("Demo accounts (username / password):")
        for username, password, role, _ in DEMO_USERS:
            self.stdout.write(f"  {username:<11} / {password:<11} {role}")
