from django.core.management.base import BaseCommand, CommandError

from annotation.management.lookup import project_or_error
from core.errors import NotFound
from evaluation.management.following import run_follow
from evaluation.models import EvalRun
from evaluation.runs.report import report_tables
from evaluation.runs.services import RunInvalid, run_judge
from evaluation.selectors import run_for_project, run_progress
from generation.selectors import endpoint_named
from generation.services import endpoint_from_environment


class Command(BaseCommand):
    help = (
        "Judge the open answers of a finished run — one imported from lm-eval or Inspect logs or a results "
        "file, or one made without a judge — with one of the platform's judges, and follow it. Example:\n"
        "  judge_run SLUG 12 --judge gpt-4o"
    )

    def add_arguments(self, parser):
        parser.add_argument("project", help="project slug")
        parser.add_argument("run", help="run number, as on its page (#12 → 12)")
        parser.add_argument("--judge", required=True, help="endpoint that scores and ranks the answers")
        parser.add_argument("--here", action="store_true", help="judge in this process instead of a worker")
        parser.add_argument(
            "--no-wait", action="store_true", help="print the run id and leave it to the workers"
        )

    def handle(self, *args, **options):
        project = project_or_error(options["project"])
        endpoint_from_environment()
        try:
            run = run_for_project(project, options["run"].lstrip("#"))
        except NotFound as exc:
            raise CommandError(str(exc)) from exc
        try:
            judge = endpoint_named(project, options["judge"])
        except LookupError as exc:
            raise CommandError(f"--judge: {exc}.") from exc
        try:
            run = run_judge(run=run, judge_endpoint=judge, enqueue=not options["here"])
        except RunInvalid as exc:
            raise CommandError(
                "; ".join(
                    f"{'--judge' if field == 'judge_endpoint' else field}: {message}"
                    for field, message in exc.errors.items()
                )
            ) from exc
        if options["no_wait"] and not options["here"]:
            self.stdout.write(str(run.pk))
            return
        self.stderr.write(f"run #{run.pk}: {judge.label} scores and ranks its answers")
        run = run_follow(run, here=options["here"], stream=self.stderr._out, quiet=False)
        progress = run_progress(run)
        self.stdout.write(
            f"run #{run.pk} {run.status}: {progress.done} calls done, {progress.failed} failed; "
            f"cost ${progress.cost:.4f}"
        )
        for table in report_tables([run]):
            if table.key in ("judge_scores", "rankings"):
                self.stdout.write(f"\n{table.title}\n{table.csv()}")
        if run.status != EvalRun.Status.SUCCEEDED:
            raise CommandError(f"run #{run.pk} {run.status}" + (f": {run.error}" if run.error else ""))
