"""Following a benchmark run from a command (``evaluate``, ``judge_run``): in this process with ``--here``, or
by watching the workers, with its progress on the command's error stream and Ctrl+C cancelling it."""

from evaluation.runs.services import run_cancel, run_claim, run_execute
from evaluation.selectors import run_progress
from generation.management.progress import follow, run_here


def _describe(run):
    progress = run_progress(run)
    return (
        progress.total,
        progress.done + progress.failed,
        f"{run.status} · {run.get_stage_display()} · failed {progress.failed} · ${progress.cost:.4f}",
    )


def run_follow(run, *, here: bool, stream, quiet: bool):
    """The run once it ended (or was cancelled), executed here when ``here``."""
    runner = None
    if here:
        runner = run_here(
            claim=lambda owner: run_claim(run_id=run.pk, owner=owner),
            execute=lambda owner: run_execute(run_id=run.pk, owner=owner),
            name=f"run #{run.pk}",
        )
    return follow(
        run,
        runner=runner,
        stream=stream,
        quiet=quiet,
        describe=_describe,
        cancel=lambda run: run_cancel(run=run),
    )
