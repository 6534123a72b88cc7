"""Hostile files are refused before they cost anything, at every door that reads a table: the import's preview,
the import itself, a benchmark run's results, ExpliCa's pairs and a design's import page. The bombs are made by
``tests/security/bombs.py`` (small on disk); each door's peak memory is measured while it refuses them."""

import io
import tracemalloc
import zipfile
from itertools import islice

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from annotation.importing import ImportRejected, questions_import
from annotation.importing.errors import ImportFileError
from annotation.importing.tables import open_table
from annotation.models import Item
from tests.security import bombs

pytestmark = pytest.mark.django_db

PEAK_BYTES = 40 * 1024 * 1024  # far under any bomb's size expanded (64 to 200 MB)


@pytest.fixture(scope="module")
def bomb_files():
    return {
        "zipped.zip": bombs.zipped_csv(),
        "members.zip": bombs.many_members(),
        "shared.xlsx": bombs.xlsx_huge_shared_string(),
        "attribute.xlsx": bombs.xlsx_huge_attribute(),
        "laughs.xlsx": bombs.xlsx_billion_laughs(),
    }


def peak_of(action) -> tuple[object, int]:
    tracemalloc.start()
    try:
        result = action()
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize(
    "name", ["zipped.zip", "members.zip", "shared.xlsx", "attribute.xlsx", "laughs.xlsx"]
)
def test_the_table_reader_refuses_a_bomb_before_expanding_it(bomb_files, name):
    def read():
        with pytest.raises(ImportFileError) as refused:
            list(islice(open_table(bomb_files[name], name).rows, 5))
        return refused.value

    refused, peak = peak_of(read)
    assert peak < PEAK_BYTES, f"{name}: {peak / 1e6:.0f} MB"
    assert refused.errors[0].reason, name


def test_a_zip_expanding_past_the_total_cap_is_refused_from_its_directory(settings):
    settings.ZIP_MAX_UNCOMPRESSED_BYTES = 1024 * 1024
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as archive:
        archive.writestr("train.csv", "question\n" + "Por que?\n" * 200_000)
    with pytest.raises(ImportFileError, match="expands to 2 MB"):
        open_table(buffer.getvalue(), "splits.zip")


def test_a_long_xml_token_and_large_shared_strings_are_refused_even_uncompressed(settings):
    settings.XML_MAX_TOKEN_BYTES = 1024 * 1024
    settings.XLSX_MAX_SHARED_STRINGS_BYTES = 1024 * 1024
    attribute = bombs.xlsx_huge_attribute(4 * 1024 * 1024, compression=zipfile.ZIP_STORED)
    with pytest.raises(ImportFileError, match="XML token longer than 1 MB"):
        list(open_table(attribute, "a.xlsx").rows)
    shared = bombs.xlsx_huge_shared_string(4 * 1024 * 1024, compression=zipfile.ZIP_STORED)
    with pytest.raises(ImportFileError, match="shared text is 4 MB"):
        open_table(shared, "s.xlsx")


def test_a_json_integer_of_thousands_of_digits_is_a_row_error_not_a_crash():
    data = b'{"question": "Por que?", "n": ' + b"9" * 5000 + b"}\n" + b'{"question": "Por que chove?"}\n'
    table = open_table(data, "q.jsonl")
    assert [line for line, _record in table.rows] == [2]
    assert "too many digits" in table.errors[0].reason


def test_a_table_gives_no_more_rows_than_the_limit(settings):
    settings.IMPORT_MAX_ROWS = 1000
    data = bombs.parquet_identical_rows(5000)
    with pytest.raises(ImportFileError, match="more than 1,000 rows"):
        list(open_table(data, "many.parquet").rows)
    with pytest.raises(ImportFileError, match="more than 1,000 rows"):
        list(open_table(data, "many.parquet").column_chunks(500, ["question"]))


def test_a_file_of_one_row_repeated_stores_a_sample_of_its_duplicates(project):
    from annotation.importing.service import DROPPED_SAMPLE
    from annotation.models import DroppedRow

    batch = questions_import(
        project=project, data=bombs.parquet_identical_rows(5000), filename="identical.parquet"
    )
    assert batch.funnel["dropped"]["by_reason"] == {"duplicate:question": 4999}
    assert DroppedRow.objects.filter(batch=batch).count() == DROPPED_SAMPLE


# --- every door ----------------------------------------------------------------------------------------------


def post_file(client, url, name, data, **fields):
    return client.post(url, {"file": SimpleUploadedFile(name, data), **fields})


@pytest.mark.parametrize("name", ["zipped.zip", "shared.xlsx", "laughs.xlsx"])
def test_the_import_preview_refuses_a_bomb_with_a_message(bomb_files, name, project, curator, client_for):
    client = client_for(curator)
    response, peak = peak_of(
        lambda: post_file(
            client, reverse("annotation:import_preview", args=[project.slug]), name, bomb_files[name]
        )
    )
    assert response.status_code == 200
    assert "Choose a file" not in response.content.decode()
    assert peak < PEAK_BYTES, f"{name}: {peak / 1e6:.0f} MB"
    assert not Item.objects.filter(project=project).exists()


@pytest.mark.parametrize("name", ["zipped.zip", "shared.xlsx"])
def test_the_import_refuses_a_bomb_with_its_reason(bomb_files, name, project):
    def run():
        with pytest.raises(ImportRejected) as rejected:
            questions_import(project=project, data=bomb_files[name], filename=name)
        return rejected.value

    rejected, peak = peak_of(run)
    assert peak < PEAK_BYTES, f"{name}: {peak / 1e6:.0f} MB"
    assert any("bomb" in error.reason for error in rejected.errors), rejected.errors


def test_the_results_import_refuses_a_bomb(bomb_files, project):
    from evaluation.runs.imported import ResultFile, ResultsRejected, run_import_results
    from tests.evaluation.test_run_import import published

    release = published.__wrapped__(project)

    def run():
        with pytest.raises(ResultsRejected) as rejected:
            run_import_results(
                project=project,
                release=release,
                name="elsewhere",
                files=[ResultFile(name="respostas.zip", data=bomb_files["zipped.zip"])],
                enqueue=False,
            )
        return rejected.value

    rejected, peak = peak_of(run)
    assert peak < PEAK_BYTES, f"{peak / 1e6:.0f} MB"
    assert "bomb" in str(rejected), rejected


def test_explicas_pairs_upload_refuses_a_bomb(bomb_files, owner, curator, annotators, client_for):
    from annotation.models import ImportBatch
    from tests.designs.published_pages import upload_pairs_and_import
    from tests.designs.test_explica import explica_team

    project = explica_team.__wrapped__(owner, curator, annotators)
    client = client_for(curator)
    # The page queues the file as any import; the worker's read refuses it.
    (batch, page), peak = peak_of(
        lambda: upload_pairs_and_import(client, project, "pairs.xlsx", bomb_files["shared.xlsx"])
    )
    assert peak < PEAK_BYTES, f"{peak / 1e6:.0f} MB"
    assert batch.status == ImportBatch.Status.FAILED
    assert "bomb" in page
    assert not Item.objects.filter(project=project).exists()


def test_a_designs_import_page_refuses_a_bomb(bomb_files, owner, curator, annotators, client_for):
    from annotation.models import ImportBatch
    from tests.designs.published_pages import upload_and_import
    from tests.designs.test_causalbench import causalbench_project

    project = causalbench_project(owner, curator, annotators)
    client = client_for(curator)
    # A design's file goes to the worker like any import: the page queues it, the worker's read refuses it.
    (batch, page), peak = peak_of(
        lambda: upload_and_import(client, project, "cenarios.xlsx", bomb_files["shared.xlsx"])
    )
    assert peak < PEAK_BYTES, f"{peak / 1e6:.0f} MB"
    assert batch.status == ImportBatch.Status.FAILED
    assert "bomb" in page
    assert not Item.objects.filter(project=project).exists()


def test_a_results_file_refused_while_its_rows_are_read_is_named_not_a_crash(project, settings):
    from evaluation.runs.imported import ResultFile, ResultsRejected, run_import_results
    from tests.evaluation.test_run_import import published, responses_file

    release = published.__wrapped__(project)
    settings.IMPORT_MAX_ROWS = 1
    with pytest.raises(ResultsRejected, match="more than 1 rows"):
        run_import_results(
            project=project, release=release, name="x", files=[responses_file()], enqueue=False
        )
    assert isinstance(responses_file(), ResultFile)
