"""In a real browser: a curator picks a Portuguese spreadsheet, sees its columns and first rows with the
proposed mapping, corrects it, maps the file's own class codes and imports; the report shows the result."""

import re

import pytest

from annotation.models import ImportBatch, Item, Membership
from annotation.tasks import import_questions_task
from tests.annotation import published_files as files
from tests.annotation.browser import browser, screenshot, sign_in  # noqa: F401 - the fixture
from tests.factories import PASSWORD, ProjectFactory, UserFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_curator_walks_the_mapping_step_and_imports_a_spreadsheet(browser, live_server, tmp_path):
    project = ProjectFactory(slug="importacao", name="Causal_QA.PT importação")
    curator = UserFactory(username="carla")
    Membership.objects.create(user=curator, project=project, role=Membership.Role.CURATOR)
    # The published sheet: its own header for the answer ("gabarito") and short class codes.
    header = ("pergunta", "gabarito", "classe", "respondido_por", "fonte", "id")
    codes = {"associacional": "ASS", "intervencional": "INT", "contrafactual": "CF"}
    rows = [(q, a, codes[c.casefold()], by, s, i) for q, a, c, by, s, i in files.CAUSAL_ROWS]
    path = tmp_path / "causal_qa_pt.xlsx"
    path.write_bytes(files.xlsx_bytes(rows=rows, header=header, sheet="perguntas", extra_sheets=()))

    page = sign_in(browser, live_server, "carla", PASSWORD)
    page.goto(f"{live_server.url}/p/{project.slug}/imports/")
    page.set_input_files("input[name=file]", str(path))
    page.wait_for_selector("#column-mapping")
    screenshot(page, "import-01-mapping-proposed")

    assert page.input_value("#column_question") == "pergunta"
    assert page.input_value("#column_causal_class") == "classe"
    assert page.input_value("#column_answer") == "gabarito"  # the answer key: a name the platform knows
    assert page.locator("#mapping-preview tbody tr").count() == 5
    assert "matches no label" in page.inner_text("#mapping-class-values")

    page.select_option("#column_answer", "gabarito")
    page.fill("#id_values", "causal_class:ASS=associational, INT=interventional, CF=counterfactual")
    page.check("#id_no_length_bounds")
    screenshot(page, "import-02-mapping-corrected")
    page.click("#import-form button[type=submit]")
    page.wait_for_url(re.compile(r".*/imports/\d+/$"))

    batch = ImportBatch.objects.get()
    import_questions_task(batch.pk)  # what the worker runs
    page.reload()
    page.wait_for_selector(".funnel")
    screenshot(page, "import-03-report")
    assert "gabarito" in page.inner_text("#import-mapping")

    assert project.items.count() == 8
    assert project.items.filter(causal_class="counterfactual").count() == 3
    assert project.items.get(external_id="cqa-004").answer_by == Item.AnswerBy.MODEL
