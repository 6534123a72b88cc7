from django.core.management.base import BaseCommand, CommandError

from generation.models import ModelEndpoint
from generation.services import endpoint_test_connection


class Command(BaseCommand):
    help = (
        "Test a model endpoint: one call asking for one token, and the answer or the error in plain words "
        "(the Test connection button of the model endpoints page). Examples:\n"
        "  test_endpoint 'demo model (scripted — not a language model)'\n"
        "  test_endpoint local-ollama --project my-project"
    )

    def add_arguments(self, parser):
        parser.add_argument("name", help="the endpoint's name (site-wide, or the project's with --project)")
        parser.add_argument("--project", help="the slug of the project the endpoint belongs to")

    def handle(self, *args, name, project=None, **options):
        endpoints = ModelEndpoint.objects.filter(name=name)
        endpoints = endpoints.filter(project__slug=project) if project else endpoints.filter(project=None)
        endpoint = endpoints.first()
        if endpoint is None:
            where = f"project {project!r}" if project else "the site-wide endpoints"
            names = ", ".join(
                (
                    ModelEndpoint.objects.filter(project__slug=project)
                    if project
                    else ModelEndpoint.objects.filter(project=None)
                ).values_list("name", flat=True)
            )
            raise CommandError(f"no endpoint named {name!r} among {where} (there are: {names or 'none'})")
        outcome = endpoint_test_connection(endpoint)
        if not outcome.ok:
            raise CommandError(f"{endpoint.name}: {outcome.message}")
        self.stdout.write(
            f"{endpoint.name}: {outcome.message}" + (f" Reply: {outcome.reply!r}" if outcome.reply else "")
        )
