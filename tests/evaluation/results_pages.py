"""Importing results on the runs page: the page stores the files and queues the import; the worker reads them;
the import's page shows the status, then the report."""

from dataclasses import dataclass

from django.urls import reverse

from evaluation.models import ResultsImport
from evaluation.tasks import import_run_results_task


@dataclass
class Posted:
    response: object  # the answer to the form's post
    results_import: ResultsImport | None  # None: the form itself was refused
    page: str  # the import's page once the worker is done (or the form's page, refused)
    waiting: object = None  # the import's page, polled by htmx, before the worker took the import
    callbacks: list = None  # what the worker left for after its commit (the run's BERTScore)


def post_results(client, project, data: dict, capture, **headers) -> Posted:
    """Post the runs page's import form; when it is taken, run what the worker runs."""
    with capture(execute=False) as queued:
        response = client.post(reverse("evaluation:run_import", args=[project.slug]), data, **headers)
    if response.status_code != 302:
        return Posted(response, None, response.content.decode(), callbacks=[])
    results_import = ResultsImport.objects.latest("pk")
    assert response["Location"] == reverse(
        "evaluation:results_import_detail", args=[project.slug, results_import.pk]
    )
    assert len(queued) == 1, "the import is handed to a worker once the request commits"
    waiting = client.get(response["Location"], headers={"HX-Request": "true"}, **headers)
    with capture(execute=False) as callbacks:
        import_run_results_task(results_import.pk)
    results_import.refresh_from_db()
    page = client.get(response["Location"], **headers).content.decode()
    return Posted(response, results_import, page, waiting, callbacks)
