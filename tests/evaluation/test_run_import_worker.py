"""An import of results made on the command line with ``--no-wait`` is taken by a running worker at once, not at
the periodic sweep: the run it makes is handed over when the import commits."""

import io
import time

import pytest
from django.core.management import call_command

from evaluation.models import EvalRun
from tests.evaluation.test_run_import_conflicts import published, responses  # noqa: F401 (a fixture)


@pytest.mark.django_db(transaction=True)
def test_no_wait_hands_the_run_to_the_worker_that_is_up(celery_worker_process, project, published, tmp_path):
    answers = responses()
    (tmp_path / answers.name).write_bytes(answers.data)
    started = time.monotonic()
    call_command(
        "import_run_results",
        str(tmp_path / answers.name),
        project=project.slug,
        release=published.tag,
        name="artigo",
        no_wait=True,
    )
    run = EvalRun.objects.get()

    def taken():
        run.refresh_from_db()
        return run.status != EvalRun.Status.QUEUED

    celery_worker_process.wait_for(taken, timeout=90)
    assert time.monotonic() - started < 120  # the sweep comes every five minutes
    celery_worker_process.wait_for(lambda: EvalRun.objects.get(pk=run.pk).is_finished, timeout=240)
    run.refresh_from_db()
    assert run.status == EvalRun.Status.SUCCEEDED, run.error


@pytest.mark.django_db(transaction=True)
def test_no_wait_reports_a_run_a_worker_took_before_the_command_read_it(
    monkeypatch, project, published, tmp_path
):
    """A worker may take the run between the import's commit and the command's last look at it: the command
    says the run is running and succeeds (it failed with "run #N running" when the worker was that quick)."""
    from evaluation.runs import services

    def taken_at_once(run_id: int) -> None:  # as a worker that takes the run the moment it is handed over
        EvalRun.objects.filter(pk=run_id).update(status=EvalRun.Status.RUNNING)

    monkeypatch.setattr(services, "run_enqueue", taken_at_once)
    answers = responses()
    (tmp_path / answers.name).write_bytes(answers.data)
    out = io.StringIO()
    call_command(
        "import_run_results",
        str(tmp_path / answers.name),
        project=project.slug,
        release=published.tag,
        name="artigo",
        no_wait=True,
        stdout=out,
        stderr=io.StringIO(),
    )
    run = EvalRun.objects.get()
    assert run.status == EvalRun.Status.RUNNING
    assert f"run #{run.pk} running" in out.getvalue()
