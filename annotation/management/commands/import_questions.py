import json
import sys
from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from annotation.importing import ImportRejected, questions_import
from annotation.management.lookup import project_or_error


class Command(BaseCommand):
    help = (
        "Import source questions from a CSV or JSONL file into a project, through the Causal_QA.PT "
        "funnel (causal → unique → length bounds). Nothing is imported if a row is invalid, "
        "unless --skip-invalid is given."
    )

    def add_arguments(self, parser):
        parser.add_argument("path", help="CSV (UTF-8, BOM allowed) or JSONL file")
        parser.add_argument("--project", required=True, help="project slug")
        parser.add_argument("--skip-invalid", action="store_true", help="import the valid rows, list the invalid")
        parser.add_argument("--user", help="username recorded as the importer")
        parser.add_argument("--json", action="store_true", help="print the funnel report as one JSON object")

    def handle(self, *args, **options):
        project = project_or_error(options["project"])
        path = Path(options["path"])
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise CommandError(f"Cannot read {path}: {exc.strerror}") from exc
        user = None
        if options["user"]:
            user = get_user_model().objects.filter(username=options["user"]).first()
            if user is None:
                raise CommandError(f"No user {options['user']!r}.")
        show = None if options["json"] else (lambda stage: self.stderr.write(f"… {stage}"))
        try:
            batch = questions_import(
                project=project,
                data=data,
                filename=path.name,
                user=user,
                skip_invalid=options["skip_invalid"],
                progress=show,
            )
        except ImportRejected as exc:
            if options["json"]:
                self.stdout.write(json.dumps({"error": "rejected", "errors": [e.as_dict() for e in exc.errors]}))
                sys.exit(1)
            raise CommandError(str(exc)) from exc
        funnel = batch.funnel
        if options["json"]:
            report = {key: funnel[key] for key in ("read", "causal", "unique", "in_length", "imported", "invalid")}
            report.update(batch=batch.pk, already_present=funnel["already_present"], bounds=funnel["bounds"])
            self.stdout.write(json.dumps(report, ensure_ascii=False))
            return
        self.stdout.write(
            "rows read {read} → causal {causal} → unique {unique} → within length {in_length} → imported {imported}".format(
                **funnel
            )
        )
        bounds = funnel["bounds"]
        upper = "no upper bound" if bounds["max_words"] is None else f"{bounds['max_words']:g}"
        self.stdout.write(f"length bounds: {bounds['min_words']} to {upper} words")
        if funnel["invalid"]:
            self.stdout.write(self.style.WARNING(f"{funnel['invalid']} invalid row(s) skipped:"))
            for error in batch.errors[:50]:
                self.stdout.write(f"  line {error['line']}, {error['field'] or '-'}: {error['reason']}")
        if funnel["already_present"]:
            self.stdout.write(f"{funnel['already_present']} row(s) already in the project were not imported again")
        self.stdout.write(self.style.SUCCESS(f"import #{batch.pk} done"))
