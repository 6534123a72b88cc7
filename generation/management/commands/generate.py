import json
import re
import threading
import time

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.db.models import Q
from tqdm import tqdm

from annotation.models import Project
from generation import selectors
from generation.models import GenerationJob
from generation.services import (
    JobInvalid,
    endpoint_from_environment,
    job_cancel,
    job_claim,
    job_create,
    job_run,
    new_owner_token,
)

KINDS = {"questions": "questions", "answers": "answer", "distractors": "distractors", "revision": "revision"}


class Command(BaseCommand):
    help = (
        "Start a generation job and follow it with a progress bar. Examples:\n"
        "  generate questions --project SLUG --model NAME --class counterfactual --count 20 --topic 'Educação e carreira' "
        "--answer-model NAME\n"
        "  generate answers --project SLUG --model NAME --items 12,13,14   (or --all-waiting)\n"
        "  generate distractors --project SLUG --model NAME\n"
        "  generate revision --project SLUG --model NAME --items 12"
    )

    def add_arguments(self, parser):
        parser.add_argument("kind", choices=list(KINDS))
        parser.add_argument("--project", required=True, help="project slug")
        parser.add_argument("--model", help="endpoint name (default: the only usable endpoint)")
        parser.add_argument("--class", dest="causal_class", default="", help="questions: the causal class")
        parser.add_argument("--count", type=int, help="questions: how many")
        parser.add_argument("--topic", help="questions: topic label or id")
        parser.add_argument("--batch-size", type=int, default=10, help="questions: questions per call")
        parser.add_argument("--answer-model", help="questions: endpoint name that answers the new questions")
        parser.add_argument("--variant", choices=["class-agnostic", "class-informed"], default="class-agnostic",
                            help="answers (and --answer-model): the answer prompt")
        parser.add_argument("--items", help="item ids, separated by commas")
        parser.add_argument("--all-waiting", action="store_true", help="answers: every item waiting for an answer")
        parser.add_argument("--user", help="username recorded as the job's creator")
        parser.add_argument("--here", action="store_true", help="run the job in this process instead of a worker")
        parser.add_argument("--no-wait", action="store_true", help="print the job id and leave it to the workers")
        parser.add_argument("--json", action="store_true", help="print the finished job as one JSON object")

    def handle(self, *args, **options):
        project = Project.objects.filter(slug=options["project"]).first()
        if project is None:
            raise CommandError(f"No project with slug {options['project']!r}.")
        endpoint_from_environment()
        kind = KINDS[options["kind"]]
        arguments = {
            "project": project,
            "kind": kind,
            "endpoint": self._endpoint(project, options["model"], "--model"),
            "user": self._user(options["user"]),
            "enqueue": not options["here"],
        }
        item_ids = self._item_ids(options["items"])
        if kind == "questions":
            arguments.update(
                count=options["count"], causal_class=options["causal_class"], topic=self._topic(project, options["topic"]),
                batch_size=options["batch_size"], answer_variant=options["variant"],
                answer_endpoint=self._endpoint(project, options["answer_model"], "--answer-model")
                if options["answer_model"] else None,
            )
        elif kind == "answer":
            if options["all_waiting"]:
                item_ids = list(selectors.items_waiting_for_answer(project).values_list("pk", flat=True))
            arguments.update(item_ids=item_ids, answer_variant=options["variant"])
        else:
            arguments.update(item_ids=item_ids)
        try:
            job = job_create(**arguments)
        except JobInvalid as exc:
            raise CommandError("; ".join(f"{field}: {message}" for field, message in exc.errors.items())) from exc
        if options["no_wait"] and not options["here"]:
            self.stdout.write(str(job.pk))
            return
        self.stderr.write(f"job #{job.pk}: {job.get_kind_display()} with {job.endpoint.label}")
        runner = self._run_here(job) if options["here"] else None
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

    def _run_here(self, job):
        owner = new_owner_token()
        if not job_claim(job_id=job.pk, owner=owner):
            raise CommandError(f"job #{job.pk} could not be claimed")
        outcome = {}

        def run():
            from django.db import connection

            try:
                outcome["result"] = job_run(job_id=job.pk, owner=owner)
            except Exception as exc:  # noqa: BLE001 - reported by the main thread
                outcome["error"] = exc
            finally:
                connection.close()

        thread = threading.Thread(target=run, name=f"job-{job.pk}", daemon=True)
        thread.start()
        return thread

    def _follow(self, job, runner, quiet):
        # tqdm writes carriage returns; the command's OutputWrapper would add a newline to each.
        bar = tqdm(total=job.total or 1, unit="call", disable=quiet, file=self.stderr._out, dynamic_ncols=True)
        warned = False
        started = time.monotonic()
        try:
            while True:
                job.refresh_from_db()
                bar.total = max(job.total, 1)
                bar.n = job.done + job.failed
                bar.set_postfix_str(f"{job.status} · failed {job.failed} · retried {job.retried} · ${job.cost:.4f}")
                bar.refresh()
                if job.is_finished and (runner is None or not runner.is_alive()):
                    return job
                if job.status == GenerationJob.Status.QUEUED and not warned and time.monotonic() - started > 5:
                    bar.write("waiting for a worker: start one with `celery -A causalqa_site worker`, or use --here")
                    warned = True
                time.sleep(0.5)
        except KeyboardInterrupt:
            bar.write("cancelling: no new calls; waiting for the calls under way")
            job_cancel(job=job)
            while not job.is_finished:
                time.sleep(0.5)
                job.refresh_from_db()
            return job
        finally:
            bar.close()

    def _endpoint(self, project, name, option):
        usable = selectors.endpoints_for_project(project)
        if name is None:
            if usable.count() == 1:
                return usable.get()
            names = ", ".join(usable.values_list("name", flat=True)) or "none; set LLM_BASE_URL and LLM_MODEL"
            raise CommandError(f"Choose an endpoint with {option} (usable: {names}).")
        matches = list(usable.filter(Q(name=name) | Q(model=name)))
        exact = [endpoint for endpoint in matches if endpoint.name == name]
        if len(exact) == 1 or len(matches) == 1:
            return (exact or matches)[0]
        if not matches:
            names = ", ".join(usable.values_list("name", flat=True)) or "none"
            raise CommandError(f"{option}: no active endpoint {name!r} for this project (usable: {names}).")
        raise CommandError(f"{option}: {name!r} matches several endpoints; use the endpoint's name.")

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
        "job": job.pk, "kind": job.kind, "status": job.status, "total": job.total, "done": job.done,
        "failed": job.failed, "retried": job.retried, "tokens_in": job.tokens_in, "tokens_out": job.tokens_out,
        "cost": str(job.cost), "items_created": job.items_created, "error": job.error,
    }
