"""Reads of benchmark runs: lists, one run with its jobs' progress and cost."""

from dataclasses import dataclass
from decimal import Decimal

from django.db.models import Count, Q, QuerySet
from django.db.models.functions import Trim

from annotation.models import Project
from core.errors import NotFound

from ..models import EvalRun


def results_imports_for_project(project: Project, limit: int = 10):
    """The project's latest imports of results, newest first (the runs page lists them with their status)."""
    from ..models import ResultsImport

    return (
        ResultsImport.objects.filter(project=project)
        .select_related("created_by")
        .order_by("-created_at")[:limit]
    )


def runs_for_project(project: Project) -> QuerySet[EvalRun]:
    return (
        EvalRun.objects.filter(project=project)
        .select_related("release", "judge_endpoint", "created_by")
        .prefetch_related("endpoints")
        .order_by("-created_at")
    )


def run_for_project(project: Project, run_id) -> EvalRun:
    try:
        run_id = int(run_id)
    except (TypeError, ValueError):
        raise NotFound("Run ids are whole numbers.") from None
    if not 0 < run_id < 2**63:
        raise NotFound(f"{project.slug} has no run #{run_id}.")
    run = runs_for_project(project).filter(pk=run_id).first()
    if run is None:
        raise NotFound(f"{project.slug} has no run #{run_id}.")
    return run


@dataclass
class RunProgress:
    jobs: list
    total: int
    done: int
    failed: int
    cost: Decimal
    tokens_in: int
    tokens_out: int

    @property
    def percent(self) -> int:
        return min(100, int(100 * (self.done + self.failed) / self.total)) if self.total else 0

    def as_dict(self) -> dict:
        return {
            "calls": self.total,
            "done": self.done,
            "failed": self.failed,
            "cost": str(self.cost),
            "tokens_in": self.tokens_in,
            "tokens_out": self.tokens_out,
            "percent": self.percent,
            "jobs": [
                {
                    "id": job.pk,
                    "kind": job.kind,
                    "model": job.endpoint.label,
                    "status": job.status,
                    "total": job.total,
                    "done": job.done,
                    "failed": job.failed,
                    "cost": str(job.cost),
                    "resumed": job.resumed,
                }
                for job in self.jobs
            ],
        }


def run_progress(run: EvalRun) -> RunProgress:
    """The run's calls so far, from its jobs' counters (the runner keeps them on every heartbeat)."""
    jobs = list(run.jobs.select_related("endpoint").order_by("pk"))
    return RunProgress(
        jobs=jobs,
        total=sum(job.total for job in jobs),
        done=sum(job.done for job in jobs),
        failed=sum(job.failed for job in jobs),
        cost=sum((job.cost for job in jobs), Decimal("0")),
        tokens_in=sum(job.tokens_in for job in jobs),
        tokens_out=sum(job.tokens_out for job in jobs),
    )


EMPTY_WARNING_SHARE = 0.10


@dataclass
class EmptyResponses:
    empty: int
    total: int

    @property
    def share(self) -> float:
        return self.empty / self.total if self.total else 0.0

    @property
    def warn(self) -> bool:
        """More than 10% of the answers say nothing: a prompt reading the wrong key, or a model that fails."""
        return self.share > EMPTY_WARNING_SHARE


def empty_responses(run: EvalRun) -> EmptyResponses:
    """How many of the run's responses are empty (failed, or a blank answer), of all of them."""
    counts = run.responses.annotate(trimmed=Trim("text")).aggregate(
        total=Count("id"), empty=Count("id", filter=Q(trimmed=""))
    )
    return EmptyResponses(counts["empty"], counts["total"])
