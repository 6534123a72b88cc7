import json
import re

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.db.models import Q

from annotation.management.lookup import project_or_error
from generation import selectors
from generation.kinds import job_kind, job_kinds
from generation.management.progress import follow, run_here
from generation.models import GenerationJob
from generation.options import (
    FlagOption,
    OptionField,
    command_flags,
    command_help,
    option_fields,
    options_resolve,
)
from generation.services import (
    JobInvalid,
    endpoint_from_environment,
    job_cancel,
    job_claim,
    job_create,
    job_run,
)
from generation.services.jobs import ANSWER_VARIANTS


class Command(BaseCommand):
    help = (
        "Start a generation job of any registered kind (generation's and the designs') and follow it with a "
        "progress bar. Examples:\n"
        "  generate questions --project SLUG --model NAME --class counterfactual --count 20 --topic 'Educação e carreira' "
        "--answer-model NAME\n"
        "  generate answers --project SLUG --model NAME --items 12,13,14   (default: every item waiting)\n"
        "  generate distractors --project SLUG --model NAME\n"
        "  generate revision --project SLUG --model NAME --items 12\n"
        "  generate KIND --project SLUG --model NAME [--count N] [the kind's own options, listed below]"
    )

    def add_arguments(self, parser):
        parser.add_argument("kind", choices=[kind.command_name for kind in job_kinds()])
        parser.add_argument("--project", required=True, help="project slug")
        parser.add_argument("--model", help="endpoint name (default: the only usable endpoint)")
        parser.add_argument("--class", dest="causal_class", default="", help="questions: the causal class")
        parser.add_argument("--count", type=int, help="questions (or scenarios): how many")
        parser.add_argument("--topic", help="questions: topic label or id")
        parser.add_argument("--batch-size", type=int, default=10, help="questions: questions per call")
        parser.add_argument("--answer-model", help="questions: endpoint name that answers the new questions")
        parser.add_argument(
            "--variant",
            choices=list(ANSWER_VARIANTS),
            default="class-agnostic",
            help="answers (and --answer-model): the answer prompt",
        )
        parser.add_argument("--items", help="item ids, separated by commas (default: every eligible item)")
        parser.add_argument(
            "--all-waiting",
            action="store_true",
            help="answers: every item waiting for an answer (the default without --items)",
        )
        self._own_options = _kinds_options()
        for name, (flags, help_text, field) in self._own_options.items():
            if isinstance(field, FlagOption):
                parser.add_argument(
                    *flags, dest=name, action="store_const", const=not field.default, help=help_text
                )
            else:
                parser.add_argument(*flags, dest=name, help=help_text)
        parser.add_argument("--user", help="username recorded as the job's creator")
        parser.add_argument(
            "--here", action="store_true", help="run the job in this process instead of a worker"
        )
        parser.add_argument(
            "--no-wait", action="store_true", help="print the job id and leave it to the workers"
        )
        parser.add_argument("--json", action="store_true", help="print the finished job as one JSON object")

    def handle(self, *args, **options):
        project = project_or_error(options["project"])
        endpoint_from_environment()
        kind = {kind.command_name: kind.key for kind in job_kinds()}[options["kind"]]
        item_ids = None if options["all_waiting"] else self._item_ids(options["items"])
        arguments = {
            "project": project,
            "kind": kind,
            "endpoint": self._endpoint(project, options["model"], "--model"),
            "user": self._user(options["user"]),
            "enqueue": not options["here"],
            "count": options["count"],
            "causal_class": options["causal_class"],
            "topic": self._topic(project, options["topic"]),
            "batch_size": options["batch_size"],
            "answer_variant": options["variant"],
            "answer_endpoint": self._endpoint(project, options["answer_model"], "--answer-model")
            if options["answer_model"]
            else None,
            "item_ids": item_ids,
            **self._kind_options(project, job_kind(kind), options),
        }
        try:
            job = job_create(**arguments)
        except JobInvalid as exc:
            raise CommandError(
                "; ".join(f"{field}: {message}" for field, message in exc.errors.items())
            ) from exc
        if options["no_wait"] and not options["here"]:
            self.stdout.write(str(job.pk))
            return
        self.stderr.write(f"job #{job.pk}: {job.kind_label} with {job.endpoint.label}")
        runner = None
        if options["here"]:
            runner = run_here(
                claim=lambda owner: job_claim(job_id=job.pk, owner=owner),
                execute=lambda owner: job_run(job_id=job.pk, owner=owner),
                name=f"job #{job.pk}",
            )
        job = self._follow(job, runner, quiet=options["json"])
        if options["json"]:
            self.stdout.write(json.dumps(_summary(job), ensure_ascii=False))
        else:
            self.stdout.write(
                f"job #{job.pk} {job.status}: {job.done} done, {job.failed} failed, {job.retried} retried; "
                f"tokens {job.tokens_in} in / {job.tokens_out} out; cost ${job.cost:.4f}"
            )
        if job.status != GenerationJob.Status.SUCCEEDED:
            raise CommandError(f"job #{job.pk} {job.status}" + (f": {job.error}" if job.error else ""))

    def _kind_options(self, project, kind, options) -> dict:
        """The kind's own options given on the command line, checked by the kind's options and resolved as the
        API's are; the ones not given are left to their defaults."""
        if kind.options is None:
            return {}
        fields = option_fields(kind.options)
        given = {}
        for name, field in fields.items():
            value = options.get(name)
            if value is None:
                continue
            try:
                given[name] = field.from_command(project, value) if isinstance(field, OptionField) else value
            except ValueError as exc:
                raise CommandError(f"{self._flag(name)}: {exc}") from exc
        checked = kind.options(data=given)
        if not checked.is_valid():
            raise CommandError(
                "; ".join(
                    f"{self._flag(name)}: {' '.join(map(str, problems))}"
                    for name, problems in checked.errors.items()
                )
            )
        given = {name: value for name, value in checked.validated_data.items() if name in given}
        errors = {}
        resolved = options_resolve(kind.options, project, given, errors)
        if errors:
            raise CommandError(
                "; ".join(f"{self._flag(name)}: {problem}" for name, problem in errors.items())
            )
        return resolved

    def _flag(self, name) -> str:
        return self._own_options[name][0][0]

    def _follow(self, job, runner, quiet):
        def describe(job):
            return (
                job.total,
                job.done + job.failed,
                (f"{job.status} · failed {job.failed} · retried {job.retried} · ${job.cost:.4f}"),
            )

        return follow(
            job,
            runner=runner,
            stream=self.stderr._out,
            quiet=quiet,
            describe=describe,
            cancel=lambda job: job_cancel(job=job),
        )

    def _endpoint(self, project, name, option):
        usable = selectors.endpoints_for_project(project)
        if name is None:
            if usable.count() == 1:
                return usable.get()
            names = ", ".join(usable.values_list("name", flat=True)) or "none; set LLM_BASE_URL and LLM_MODEL"
            raise CommandError(f"Choose an endpoint with {option} (usable: {names}).")
        try:
            return selectors.endpoint_named(project, name)
        except LookupError as exc:
            raise CommandError(f"{option}: {exc}.") from exc

    def _topic(self, project, value):
        if not value:
            return None
        topic = project.topics.filter(Q(label=value) | Q(pk=int(value) if value.isdigit() else None)).first()
        if topic is None:
            labels = ", ".join(project.topics.values_list("label", flat=True)[:20]) or "none"
            raise CommandError(f"--topic: no topic {value!r} in the project (topics: {labels}).")
        return topic

    def _item_ids(self, text):
        if not text:
            return None
        parts = [part for part in re.split(r"[\s,;]+", text) if part]
        bad = [part for part in parts if not part.isdigit()]
        if bad:
            raise CommandError(f"--items: not an item id: {', '.join(bad[:5])}")
        return [int(part) for part in parts]

    def _user(self, username):
        if not username:
            return None
        user = get_user_model().objects.filter(username=username).first()
        if user is None:
            raise CommandError(f"No user {username!r}.")
        return user


def _summary(job) -> dict:
    return {
        "job": job.pk,
        "kind": job.kind,
        "status": job.status,
        "total": job.total,
        "done": job.done,
        "failed": job.failed,
        "retried": job.retried,
        "tokens_in": job.tokens_in,
        "tokens_out": job.tokens_out,
        "cost": str(job.cost),
        "items_created": job.items_created,
        "error": job.error,
    }


def _kinds_options() -> dict:
    """Every registered kind's own options: name -> (flags, help, field). Kinds that share an option share its
    flag, which takes every kind's spellings and help."""
    found = {}
    for kind in job_kinds():
        for name, field in option_fields(kind.options).items():
            flags, help_text = command_flags(name, field), command_help(field)
            if name in found:
                first_flags, first_help, field = found[name]
                flags = tuple(dict.fromkeys(first_flags + flags))
                help_text = " / ".join(dict.fromkeys(text for text in (first_help, help_text) if text))
            found[name] = (flags, help_text, field)
    return found
