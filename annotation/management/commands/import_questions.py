import json
import sys
from contextlib import ExitStack
from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from annotation.importing import (
    ImportRejected,
    Mapping,
    MappingError,
    parse_columns,
    parse_values,
    questions_import,
)
from annotation.importing.errors import ImportFileError
from annotation.importing.preview import proposed as propose_for
from annotation.importing.preview import sample_rows
from annotation.importing.tables import FORMATS, open_table
from annotation.management.lookup import project_or_error


class Command(BaseCommand):
    help = (
        f"Import source questions from a file ({FORMATS}) into a project, through the Causal_QA.PT "
        "funnel (causal → unique → length bounds). Columns are matched by their names (English or "
        "Portuguese) or as --columns says. Nothing is imported if a row is invalid, unless --skip-invalid is given."
    )

    def add_arguments(self, parser):
        parser.add_argument("path", help="a CSV/TSV/JSONL/JSON/XLSX/Parquet file, or a folder of splits")
        parser.add_argument("--project", required=True, help="project slug")
        parser.add_argument(
            "--columns",
            default="",
            help="which column is which field: question=COL,causal_class=COL,answer=COL,answer_by=COL,source=COL,"
            "topic=COL,id=COL,context=COL,expertise=COL,is_causal=COL (fields not named: proposed from names)",
        )
        parser.add_argument(
            "--values",
            default="",
            help="the file's own codes: causal_class:Assoc=associational,Inter=interventional;"
            " answer_by:H=person,M=gpt-4o",
        )
        parser.add_argument("--sheet", default="", help="the spreadsheet's sheet (default: the first)")
        parser.add_argument(
            "--skip-invalid", action="store_true", help="import the valid rows, list the invalid"
        )
        parser.add_argument(
            "--as-gold",
            action="store_true",
            help="the items are already reviewed: approve them, with a decision by --user",
        )
        parser.add_argument(
            "--no-length-bounds",
            action="store_true",
            help="keep questions of every length (a curated dataset)",
        )
        parser.add_argument(
            "--user", help="username recorded as the importer (and the curator, with --as-gold)"
        )
        parser.add_argument("--json", action="store_true", help="print the funnel report as one JSON object")

    def _say_mapping(self, mapping: dict | None) -> None:
        for line in mapping_lines(mapping or {}):
            self.stdout.write(line)

    def handle(self, *args, **options):
        project = project_or_error(options["project"])
        path = Path(options["path"])
        if not path.exists():
            raise CommandError(f"Cannot read {path}: no such file or folder")
        if not path.is_dir():
            try:
                path.open("rb").close()
            except OSError as exc:
                raise CommandError(f"Cannot read {path}: {exc.strerror}") from exc
        # The file is read from its path, in chunks, as the worker reads an upload (memory stays flat); the
        # import service chooses between the design's reader of its published layout and the column mapping.
        mapping = None
        if options["columns"] or options["values"]:
            try:
                columns, values = parse_columns(options["columns"]), parse_values(options["values"])
            except MappingError as exc:
                raise CommandError(str(exc)) from exc
            mapping = _complete(path, project, columns, values, options["sheet"])
        user = None
        if options["as_gold"] and not options["user"]:
            raise CommandError("--as-gold records who reviewed the items: give --user USERNAME.")
        if options["user"]:
            user = get_user_model().objects.filter(username=options["user"]).first()
            if user is None:
                raise CommandError(f"No user {options['user']!r}.")
        show = None if options["json"] else (lambda stage: self.stderr.write(f"… {stage}"))
        try:
            batch = questions_import(
                project=project,
                filename=path.name,
                path=path,
                user=user,
                skip_invalid=options["skip_invalid"],
                mapping=mapping,
                sheet=options["sheet"],
                as_gold=options["as_gold"],
                length_bounds_on=not options["no_length_bounds"],
                progress=show,
            )
        except ImportRejected as exc:
            if not options["json"]:
                self._say_mapping(exc.batch.mapping)
            if options["json"]:
                self.stdout.write(
                    json.dumps({"error": "rejected", "errors": [e.as_dict() for e in exc.errors]})
                )
                sys.exit(1)
            if exc.batch.funnel.get("format") == "published":  # the design's reader refused the file
                problems = "; ".join(e.reason if not (e.line or e.field) else str(e) for e in exc.errors[:20])
                raise CommandError(f"Nothing was imported: {problems}") from exc
            raise CommandError(str(exc)) from exc
        funnel = batch.funnel
        if "published" in funnel:  # read by the design's reader of its authors' files
            if options["json"]:
                self.stdout.write(json.dumps({"batch": batch.pk, **funnel["published"]}, ensure_ascii=False))
                return
            self.stdout.write(self.style.SUCCESS(funnel["published"]["summary"]))
            self.stdout.write(self.style.SUCCESS(f"import #{batch.pk} done"))
            return
        if options["json"]:
            report = {
                key: funnel[key] for key in ("read", "causal", "unique", "in_length", "imported", "invalid")
            }
            report.update(
                batch=batch.pk,
                already_present=funnel["already_present"],
                bounds=funnel["bounds"],
                length_bounds=funnel["length_bounds"],
                classes=funnel["classes"],
                format=funnel["format"],
                mapping=batch.mapping,
            )
            self.stdout.write(json.dumps(report, ensure_ascii=False))
            return
        self._say_mapping(batch.mapping)
        self.stdout.write(
            "rows read {read} → causal {causal} → unique {unique} → within length {in_length} → imported {imported}".format(
                **funnel
            )
        )
        bounds = funnel["bounds"]
        if funnel.get("length_bounds", True):
            upper = "no upper bound" if bounds["max_words"] is None else f"{bounds['max_words']:g}"
            self.stdout.write(f"length bounds: {bounds['min_words']} to {upper} words")
        else:
            self.stdout.write("length bounds: off (every question kept)")
        if funnel["invalid"]:
            self.stdout.write(self.style.WARNING(f"{funnel['invalid']} invalid row(s) skipped:"))
            for error in batch.errors[:50]:
                self.stdout.write(f"  line {error['line']}, {error['field'] or '-'}: {error['reason']}")
        if funnel["already_present"]:
            self.stdout.write(
                f"{funnel['already_present']} row(s) already in the project were not imported again"
            )
        self.stdout.write(self.style.SUCCESS(f"import #{batch.pk} done"))


def mapping_lines(mapping: dict) -> list[str]:
    """The mapping an import used, as the command prints it: the columns, then each value translation."""
    columns = ", ".join(f"{field}={column}" for field, column in (mapping.get("columns") or {}).items())
    lines = [f"columns used: {columns or 'none'}"]
    for field, translations in (mapping.get("values") or {}).items():
        pairs = ", ".join(f"{value}={meaning}" for value, meaning in translations.items())
        lines.append(f"values used: {field}:{pairs}")
    return lines


def _complete(path, project, columns: dict, values: dict, sheet: str) -> Mapping:
    """The fields named on the command line, and the others proposed from the file's column names."""
    with ExitStack() as stack:
        try:
            open_table(None, path.name, path=path, sheet=sheet, stack=stack)  # says why a file is unreadable
        except ImportFileError as exc:
            raise CommandError(str(exc)) from exc
        proposed = propose_for(project, *sample_rows(None, path.name, path=path, sheet=sheet))
    named = set(columns.values())
    others = {
        name: column
        for name, column in proposed.columns.items()
        if name not in columns and column not in named
    }
    return Mapping(columns={**others, **columns}, values=values or proposed.values)
