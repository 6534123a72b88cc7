"""``manage.py release_archive PROJECT [VERSION]``: make and keep the zip that downloads of a release send.

A worker does this after every cut; the command is for releases cut before zips were kept, from the command
line, or whose card changed since (the project renamed): their downloads stream until then.
"""

from django.core.management.base import BaseCommand, CommandError

from annotation.management.lookup import project_or_error
from core.errors import NotFound
from evaluation.models import Release
from evaluation.releases.archive import kept_archive, release_archive_store
from evaluation.selectors import release_for_user


class Command(BaseCommand):
    help = "Make and keep the zip of every ready release of PROJECT (or of release VERSION) that has none."

    def add_arguments(self, parser):
        parser.add_argument("project")
        parser.add_argument("version", nargs="?", help="v3 or 3; every ready release without one")

    def handle(self, *args, **options):
        project = project_or_error(options["project"])
        if options["version"]:
            try:
                releases = [release_for_user(project, options["version"])]
            except NotFound as exc:
                raise CommandError(str(exc)) from exc
            if not releases[0].is_ready:
                raise CommandError(f"{project.slug} {releases[0].tag} is not ready")
        else:
            releases = list(
                project.releases.filter(status=Release.Status.READY)
                .select_related("project")
                .order_by("version")
            )
        for release in releases:
            if kept := kept_archive(release):
                self.stdout.write(f"{release.tag}: kept already, {kept}")
                continue
            path = release_archive_store(release=release)
            self.stdout.write(f"{release.tag}: {path} ({path.stat().st_size:,} bytes)")
