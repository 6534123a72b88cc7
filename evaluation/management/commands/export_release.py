"""``manage.py export_release PROJECT VERSION --out DIR``: write a release as files that `datasets` loads, and as
lm-evaluation-harness and Inspect tasks (``--format lm-eval`` or ``--format inspect`` for those alone)."""

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from annotation.management.lookup import project_or_error
from core.errors import NotFound
from evaluation.releases.export import ExportError, export_release, parse_export_formats
from evaluation.selectors import release_for_user


class Command(BaseCommand):
    help = (
        "Export release VERSION (v3 or 3) of PROJECT to DIR: data/<split>.<format>, README.md, the harness tasks "
        "(lm-eval/, inspect/), checksums.txt."
    )

    def add_arguments(self, parser):
        parser.add_argument("project")
        parser.add_argument("version")
        parser.add_argument("--out", required=True)
        parser.add_argument(
            "--format",
            default="jsonl,csv,parquet,lm-eval,inspect",
            help="comma-separated: jsonl, csv, parquet, lm-eval, inspect (lm-eval or inspect alone: that task folder)",
        )

    def handle(self, *args, **options):
        project = project_or_error(options["project"])
        try:
            formats, harnesses = parse_export_formats(options["format"])
            release = release_for_user(project, options["version"])
        except (ExportError, NotFound) as exc:
            raise CommandError(str(exc)) from exc
        if not release.is_ready:
            raise CommandError(
                f"{project.slug} {release.tag} is {release.get_status_display().lower()}, not ready"
            )
        total = sum(release.counts.get("splits", {}).values())
        with tqdm(
            total=total, unit="item", desc=release.tag, disable=options["verbosity"] == 0, file=self.stderr
        ) as bar:
            try:
                files = export_release(
                    release,
                    options["out"],
                    formats,
                    progress=lambda done: bar.update(done - bar.n),
                    harnesses=harnesses,
                )
            except ExportError as exc:
                raise CommandError(str(exc)) from exc
        for path in files:
            self.stdout.write(str(path))
