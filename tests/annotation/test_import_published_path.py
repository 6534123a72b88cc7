"""A design's published file goes in as one import of the project at a time, as any import does: two imports of
the same file at the same moment do not both pass the "already in the project" look-up; the second waits for the
first and then refuses its rows one by one. If the database still refuses rows as already there, the import fails
with a reason a person can read."""

import contextlib
import threading

import pytest
from django.db import IntegrityError, connection
from django.urls import reverse
from django.utils import translation

from annotation.designs import design_for
from annotation.importing import ImportRejected, questions_import
from annotation.importing import service as import_service
from annotation.importing.reasons import reason_translated
from annotation.models import ImportBatch, ItemGroup
from annotation.projects import project_create
from tests.designs.test_meter_dataset import RECORDS, as_jsonl

DATA = as_jsonl(RECORDS)
ALREADY = "the entry of this line of dataset.jsonl is already in the project"


@pytest.fixture
def meter(owner):
    return project_create(name="METER", slug="meter-claim", design="meter", created_by=owner)


def entries(project) -> list[str]:
    return sorted(ItemGroup.objects.filter(project=project).values_list("external_id", flat=True))


def test_the_same_published_file_imported_again_is_refused_row_by_row(meter):
    first = questions_import(project=meter, data=DATA, filename="dataset.jsonl")
    with pytest.raises(ImportRejected):
        questions_import(project=meter, data=DATA, filename="dataset.jsonl")

    assert first.status == ImportBatch.Status.DONE and not first.writing
    second = ImportBatch.objects.filter(project=meter).latest("pk")
    assert second.status == ImportBatch.Status.FAILED and not second.writing
    assert [(error["line"], error["reason"]) for error in second.errors] == [(1, ALREADY), (2, ALREADY)]
    assert entries(meter) == ["dataset-1", "dataset-2"]


@pytest.mark.django_db(transaction=True)
def test_a_published_import_waits_while_another_import_of_the_project_writes(meter, monkeypatch):
    writing = ImportBatch.objects.create(project=meter, filename="other.csv", writing=True)
    ImportBatch.objects.filter(pk=writing.pk).update(heartbeat_at=import_service.timezone.now())
    waits = []

    def wait(seconds):  # the other import finishes while this one waits
        waits.append(entries(meter))
        ImportBatch.objects.filter(pk=writing.pk).update(writing=False)

    monkeypatch.setattr(import_service.time, "sleep", wait)
    batch = questions_import(project=meter, data=DATA, filename="dataset.jsonl")

    assert waits == [[]], "nothing of the published file is written before the other import has finished"
    assert batch.status == ImportBatch.Status.DONE and not batch.writing
    assert entries(meter) == ["dataset-1", "dataset-2"]


@pytest.mark.skipif(
    connection.vendor != "postgresql", reason="two imports writing at the same moment need a server database"
)
@pytest.mark.django_db(transaction=True)
def test_two_imports_of_the_same_published_file_at_once_refuse_the_second_row_by_row(meter, monkeypatch):
    # Each import, about to write its first entry, waits (a while at most) for the other to be about to write
    # too: had both looked up what the project already has, both would now write the same entries.
    both_about_to_write = threading.Barrier(2, timeout=3)
    waited = set()

    def first_entry_waits(execute, sql, params, many, context):
        if sql.startswith('INSERT INTO "annotation_itemgroup"') and threading.get_ident() not in waited:
            waited.add(threading.get_ident())
            # Broken: the other import is not writing at the same moment.
            with contextlib.suppress(threading.BrokenBarrierError):
                both_about_to_write.wait()
        return execute(sql, params, many, context)

    monkeypatch.setattr(import_service, "WRITING_POLL_SECONDS", 0.05)
    outcomes = {}

    def run(name):
        try:
            with connection.execute_wrapper(first_entry_waits):
                questions_import(project=meter, data=DATA, filename="dataset.jsonl")
            outcomes[name] = "done"
        except ImportRejected as exc:
            outcomes[name] = [(error.line, error.reason) for error in exc.errors]
        except Exception as exc:  # noqa: BLE001 - what a worker would have logged as an internal error
            outcomes[name] = f"crashed: {type(exc).__name__}"
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(name,)) for name in ("a", "b")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)

    assert sorted(outcomes.values(), key=str) == [[(1, ALREADY), (2, ALREADY)], "done"], outcomes
    assert entries(meter) == ["dataset-1", "dataset-2"]
    batches = ImportBatch.objects.filter(project=meter)
    assert sorted(batches.values_list("status", flat=True)) == ["done", "failed"]
    assert not batches.filter(writing=True).exists()


def test_rows_the_database_refuses_fail_the_import_with_a_plain_reason(meter, monkeypatch):
    def clash(self, **kwargs):
        raise IntegrityError('duplicate key value violates unique constraint "group_unique_external_id"')

    monkeypatch.setattr(type(design_for(meter)), "published_read", clash)
    with pytest.raises(ImportRejected) as excinfo:
        questions_import(project=meter, data=DATA, filename="dataset.jsonl")

    batch = ImportBatch.objects.get(project=meter)
    assert batch.status == ImportBatch.Status.FAILED and not batch.writing
    assert batch.funnel["format"] == "published"
    [error] = batch.errors
    assert error["reason"] == import_service.PUBLISHED_CLASH
    assert "constraint" not in str(excinfo.value) and "duplicate key" not in str(excinfo.value)
    with translation.override("pt-br"):
        assert reason_translated(error["reason"]) != error["reason"]


def test_a_refused_published_file_offers_the_import_page_not_a_mapping(meter, owner, client_for):
    from tests.designs.published_pages import upload_and_import

    records = [dict(RECORDS[0], questions=[dict(RECORDS[0]["questions"][0], ladder="Association")])]
    client = client_for(owner)
    batch, page = upload_and_import(client, meter, "dataset.jsonl", as_jsonl(records))

    assert batch.status == ImportBatch.Status.FAILED
    assert "unknown ladder" in page
    assert 'id="back-to-mapping"' not in page and "Back to the mapping" not in page
    assert "columns and values you chose" not in page
    assert 'id="upload-again"' in page and "Back to the import page to upload the file again" in page
    portuguese = client.get(
        reverse("annotation:import_detail", args=[meter.slug, batch.pk]), HTTP_ACCEPT_LANGUAGE="pt-br"
    )
    assert 'id="upload-again"' in portuguese.content.decode()
    assert "Voltar à página de importação para enviar o arquivo de novo" in portuguese.content.decode()


def test_a_file_refused_through_its_mapping_still_offers_the_mapping(meter, owner, client_for):
    from tests.designs.published_pages import upload_and_import

    batch, page = upload_and_import(client_for(owner), meter, "questions.csv", b"question\n")

    assert batch.status == ImportBatch.Status.FAILED
    assert batch.funnel.get("format") != "published"
    assert 'id="back-to-mapping"' in page and 'id="upload-again"' not in page
