import json

from django.core.management.base import BaseCommand, CommandError

from annotation.management.lookup import project_or_error
from core.errors import NotFound
from evaluation.management.following import run_follow
from evaluation.models import EvalRun
from evaluation.runs.options import RUN_BOUNDS, RUN_OPTIONS
from evaluation.runs.report import report_tables
from evaluation.runs.services import (
    RunInvalid,
    run_create,
    template_versions_parse,
)
from evaluation.selectors import release_for_user, run_progress
from generation.selectors import endpoint_named
from generation.services import endpoint_from_environment


class Command(BaseCommand):
    help = (
        "Evaluate models on a release and follow the run with a progress bar. Examples:\n"
        "  evaluate SLUG --release v2 --model gpt-4o-mini --model llama --judge gpt-4o --repetitions 3\n"
        "  evaluate SLUG --model qwen --condition zero-shot --condition chain-of-thought --temperature 0"
    )

    def add_arguments(self, parser):
        parser.add_argument("project", help="project slug")
        parser.add_argument("--release", help="release version, e.g. v2 (default: the newest ready release)")
        parser.add_argument("--split", default="test", choices=["train", "dev", "test"])
        parser.add_argument(
            "--model", action="append", required=True, help="endpoint to evaluate (repeatable)"
        )
        parser.add_argument(
            "--condition",
            action="append",
            help="prompting condition (repeatable; default: the answer format's usual ones)",
        )
        parser.add_argument("--judge", help="endpoint that scores and ranks open answers")
        parser.add_argument(
            "--repetitions",
            type=int,
            default=RUN_OPTIONS["repetitions"],
            help="each question is asked this many times ({} to {})".format(*RUN_BOUNDS["repetitions"]),
        )
        parser.add_argument("--temperature", type=float)
        parser.add_argument("--max-tokens", type=int)
        parser.add_argument(
            "--seed",
            type=int,
            default=RUN_OPTIONS["seed"],
            help="seeds the order of answers shown to the judge",
        )
        parser.add_argument(
            "--few-shot",
            type=int,
            default=RUN_OPTIONS["few_shot"],
            help="solved examples in few-shot prompts ({} to {})".format(*RUN_BOUNDS["few_shot"]),
        )
        parser.add_argument(
            "--template-version",
            action="append",
            default=[],
            metavar="CONDITION=N",
            help="use version N of a condition's prompt template (default: the latest)",
        )
        parser.add_argument("--bertscore-model", default="", help="local model directory for BERTScore")
        parser.add_argument(
            "--bertscore-layer",
            type=int,
            default=RUN_OPTIONS["bertscore_layer"],
            help="hidden layer for BERTScore ({} to {}; default: the last)".format(
                *RUN_BOUNDS["bertscore_layer"]
            ),
        )
        parser.add_argument(
            "--bertscore-idf", action="store_true", help="BERTScore with idf over the references"
        )
        parser.add_argument(
            "--metadata-key",
            action="append",
            default=[],
            metavar="WHAT=KEY",
            help="item metadata key of level, type, task or variant, e.g. task=tarefa",
        )
        parser.add_argument(
            "--differences", default="", help="e.g. 'Challenge 1 = AJ - PJ; Challenge 2 = VCR - mean(others)'"
        )
        parser.add_argument("--here", action="store_true", help="run in this process instead of a worker")
        parser.add_argument(
            "--no-wait", action="store_true", help="print the run id and leave it to the workers"
        )
        parser.add_argument(
            "--json", action="store_true", help="print the finished run's report tables as JSON"
        )

    def handle(self, *args, **options):
        project = project_or_error(options["project"])
        endpoint_from_environment()
        try:
            run = run_create(
                project=project,
                release=self._release(project, options["release"]),
                split=options["split"],
                endpoints=[self._endpoint(project, name, "--model") for name in options["model"]],
                conditions=options["condition"],
                repetitions=options["repetitions"],
                judge_endpoint=self._endpoint(project, options["judge"], "--judge")
                if options["judge"]
                else None,
                decoding={"temperature": options["temperature"], "max_tokens": options["max_tokens"]},
                seed=options["seed"],
                few_shot=options["few_shot"],
                bertscore_model=options["bertscore_model"],
                bertscore_layer=options["bertscore_layer"],
                bertscore_idf=options["bertscore_idf"],
                metadata_keys=self._keys(options["metadata_key"]),
                differences=options["differences"],
                template_versions=self._versions(options["template_version"]),
                enqueue=not options["here"],
            )
        except RunInvalid as exc:
            raise CommandError(
                "; ".join(f"{field}: {message}" for field, message in exc.errors.items())
            ) from exc
        if options["no_wait"] and not options["here"]:
            self.stdout.write(str(run.pk))
            return
        self.stderr.write(f"run #{run.pk} on {run.release.tag} ({run.split}): {', '.join(run.conditions)}")
        run = run_follow(run, here=options["here"], stream=self.stderr._out, quiet=options["json"])
        progress = run_progress(run)
        if options["json"]:
            tables = [table.as_dict() for table in report_tables([run])]
            self.stdout.write(
                json.dumps(
                    {
                        "run": run.pk,
                        "status": run.status,
                        "error": run.error,
                        "progress": progress.as_dict(),
                        "tables": tables,
                    },
                    ensure_ascii=False,
                )
            )
        else:
            self.stdout.write(
                f"run #{run.pk} {run.status}: {progress.done} calls done, {progress.failed} failed; "
                f"cost ${progress.cost:.4f}"
            )
            for table in report_tables([run])[:3]:
                self.stdout.write(f"\n{table.title}\n{table.csv()}")
        if run.status != EvalRun.Status.SUCCEEDED:
            raise CommandError(f"run #{run.pk} {run.status}" + (f": {run.error}" if run.error else ""))

    def _release(self, project, version):
        if version is None:
            release = project.releases.filter(status="ready").order_by("-version").first()
            if release is None:
                raise CommandError(f"{project.slug} has no ready release; cut one with `manage.py release`.")
            return release
        try:
            return release_for_user(project, version)
        except NotFound as exc:
            raise CommandError(f"--release: {exc}") from exc

    def _endpoint(self, project, name, option):
        try:
            return endpoint_named(project, name)
        except LookupError as exc:
            raise CommandError(f"{option}: {exc}.") from exc

    def _keys(self, pairs):
        keys = {}
        for pair in pairs:
            what, _sep, key = pair.partition("=")
            if what not in ("level", "type", "task", "variant") or not key:
                raise CommandError(
                    f"--metadata-key: write level=KEY, type=KEY, task=KEY or variant=KEY, not {pair!r}"
                )
            keys[what] = key
        return keys

    def _versions(self, pairs):
        try:
            return template_versions_parse(pairs)
        except ValueError as exc:
            raise CommandError(f"--template-version: {exc}") from exc
