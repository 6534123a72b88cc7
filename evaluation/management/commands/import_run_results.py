import json
from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.files import File
from django.core.management.base import BaseCommand, CommandError

from annotation.importing.tables import FORMATS
from annotation.management.lookup import project_or_error
from core.errors import NotFound
from evaluation.models import EvalRun, ReleaseItem, ResultsImport
from evaluation.runs.imported import KINDS, KNOWN, POLICIES, ResultError
from evaluation.runs.report import report_tables
from evaluation.runs.results_import import ResultUpload, results_import_execute, results_import_start
from evaluation.runs.services import run_claim, run_execute
from evaluation.selectors import release_for_user
from generation.services import new_owner_token


class Command(BaseCommand):
    help = (
        "Create a benchmark run from files instead of model calls: model responses, judge scores and judge "
        f"rankings made elsewhere ({FORMATS}). Each file's kind is told by its columns, or by a "
        "prefix: responses=FILE, scores=FILE, rankings=FILE; a design's own result files (CausalityCheck's "
        "<VARIANT>-<TASK>res-<model>.json, one per cell) are read as published. Nothing is imported if a row does "
        "not match. Example:\n"
        "  import_run_results --project causal-qa --release v1 --name 'paper' respostas.xlsx notas.csv rankings.csv"
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "files", nargs="+", help="FILE, or KIND=FILE with KIND responses, scores or rankings"
        )
        parser.add_argument("--project", required=True, help="project slug")
        parser.add_argument("--release", required=True, help="release version, e.g. v1")
        parser.add_argument("--name", required=True, help="a name for the run, e.g. the paper's")
        parser.add_argument(
            "--split", default=ReleaseItem.Split.TEST, choices=[s for s, _ in ReleaseItem.Split.choices]
        )
        parser.add_argument(
            "--columns",
            default="",
            help="columns the names do not tell: item=COL,model=COL,condition=COL,response=COL,"
            "target=COL,criterion=COL,score=COL,ranking=COL,judge=COL (remembered for the project's next "
            "import of results)",
        )
        parser.add_argument(
            "--conflicts",
            default="",
            choices=["", *POLICIES],
            help="rows that say otherwise than an earlier row about the same answer: keep the first, the last, "
            "or both (the later one as a judge of its own, or a response as the next repetition); by default "
            "they are listed and nothing is imported",
        )
        parser.add_argument("--user", help="username recorded as the importer")
        parser.add_argument(
            "--no-wait", action="store_true", help="hand BERTScore to a worker at once and return"
        )
        parser.add_argument(
            "--json", action="store_true", help="print the run and its report as one JSON object"
        )

    def handle(self, *args, **options):
        project = project_or_error(options["project"])
        try:
            release = release_for_user(project, options["release"])
        except NotFound as exc:
            raise CommandError(f"--release: {exc}") from exc
        user = None
        if options["user"]:
            user = get_user_model().objects.filter(username=options["user"]).first()
            if user is None:
                raise CommandError(f"No user {options['user']!r}.")
        uploads = [self._file(argument) for argument in options["files"]]
        # The same import as the page's: recorded, then run here rather than by a worker.
        try:
            results_import = results_import_start(
                project=project,
                release=release,
                name=options["name"],
                files=uploads,
                split=options["split"],
                columns=options["columns"],
                conflicts=options["conflicts"],
                user=user,
                enqueue=False,
            )
        finally:
            for upload in uploads:
                upload.file.close()
        show = None if options["json"] else (lambda stage: self.stderr.write(f"… {stage}"))
        results_import = results_import_execute(
            import_id=results_import.pk,
            owner=new_owner_token(),
            enqueue_run=options["no_wait"],  # a worker starts on commit; else BERTScore is computed here
            progress=show,
        )
        if results_import.status != ResultsImport.Status.DONE:
            problems = [ResultError(**error) for error in results_import.errors]
            shown = "\n".join(f"  {error}" for error in problems[:30])
            more = f"\n  … and {len(problems) - 30} more" if len(problems) > 30 else ""
            message = f"{results_import.report.get('problems', len(problems))} problem(s); nothing was imported:\n{shown}{more}"
            if results_import.report.get("conflicting"):
                message += (
                    "\nChoose what to keep with --conflicts first, --conflicts last or --conflicts both."
                )
            raise CommandError(message)
        run = results_import.run
        self.stderr.write(f"run #{run.pk} imported")
        for line in import_lines(run.imported):
            self.stderr.write(line)
        if not options["no_wait"]:
            owner = new_owner_token()
            if run_claim(run_id=run.pk, owner=owner):
                self.stderr.write("… computing BERTScore")
                run_execute(run_id=run.pk, owner=owner)
        run.refresh_from_db()
        if options["json"]:
            tables = [table.as_dict() for table in report_tables([run])]
            self.stdout.write(
                json.dumps(
                    {
                        "run": run.pk,
                        "status": run.status,
                        "notes": run.notes,
                        "imported": run.imported,
                        "tables": tables,
                    },
                    ensure_ascii=False,
                )
            )
            return
        self.stdout.write(f"run #{run.pk} {run.status}")
        for table in report_tables([run])[:3]:
            self.stdout.write(f"\n{table.title}\n{table.csv()}")
        # Queued or running (with --no-wait a worker may have taken it already) is what was asked for.
        if run.status in (EvalRun.Status.FAILED, EvalRun.Status.CANCELLED):
            raise CommandError(f"run #{run.pk} {run.status}" + (f": {run.error}" if run.error else ""))

    def _file(self, argument: str) -> ResultUpload:
        """FILE, or KIND=FILE."""
        kind, sep, rest = argument.partition("=")
        if sep and kind in KINDS:
            path = Path(rest)
        else:
            kind, path = "", Path(argument)
        try:
            return ResultUpload(kind=kind, file=File(path.open("rb"), name=path.name), name=path.name)
        except OSError as exc:
            raise CommandError(f"Cannot read {path}: {exc.strerror}") from exc


def import_lines(imported: dict) -> list[str]:
    """What the import read, used and kept, per file, as the command prints it."""
    lines = []
    for entry in imported.get("files", []):
        lines.append(
            f"{entry['name']} ({entry['kind']}): {entry['rows']} rows read, {entry.get('stored', 0)} stored, "
            f"{entry.get('conflicting', 0)} conflicting, {entry.get('duplicates', 0)} duplicates, "
            f"{entry.get('refused', 0)} refused"
        )
        # In the roles' own order: a report read back from PostgreSQL's jsonb has its keys in another.
        used = entry.get("columns") or {}
        roles = sorted(
            used, key=lambda role: (ROLE_ORDER.index(role) if role in ROLE_ORDER else len(ROLE_ORDER), role)
        )
        columns = ", ".join(f"{role}={used[role]}" for role in roles)
        lines.append(f"  columns used: {columns or 'none'}")
        if entry.get("ignored"):
            lines.append(f"  columns ignored: {', '.join(entry['ignored'])}")
    if imported.get("conflicts_total"):
        policy = imported.get("policy") or ""
        lines.append(f"{imported['conflicts_total']} colliding row(s), kept: {policy or 'none'}")
        lines += [
            f"  {c['file']}, row {c['line']}: {c['reason']}" for c in imported.get("conflicts", [])[:20]
        ]
    return lines


ROLE_ORDER = list(KNOWN)
