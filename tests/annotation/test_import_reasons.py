"""Import-funnel reasons are stored in English and read in the reader's language: every reason the importer
writes matches a message template whose pt-BR translation keeps the values."""

from contextlib import ExitStack

import pytest
from django.utils import translation

from annotation.importing.errors import RowError
from annotation.importing.reasons import TEMPLATES, reason_translated, row_error_translated
from annotation.importing.tables import open_table


@pytest.mark.parametrize(
    "stored, portuguese",
    [
        ("9 cells but the header has 8 columns", "9 células, mas o cabeçalho tem 8 colunas"),
        ("same text as line 4", "mesmo texto da linha 4"),
        ("same id as item #12", "mesmo id do item #12"),
        ("3 words (fewer than 4)", "3 palavras (menos de 4)"),
        ("51 words (more than 38.5 = Q3 + 1.5·IQR)", "51 palavras (mais de 38.5 = Q3 + 1,5·IIQ)"),
        (
            "unknown class 'Causal?' (expected one of: associational, interventional)",
            "classe desconhecida 'Causal?' (esperada uma de: associational, interventional)",
        ),
    ],
)
def test_a_stored_reason_reads_in_portuguese_with_its_values_kept(stored, portuguese):
    with translation.override("pt-br"):
        assert reason_translated(stored) == portuguese
    with translation.override("en"):
        assert reason_translated(stored) == stored


def test_a_reason_no_template_knows_is_shown_as_stored():
    with translation.override("pt-br"):
        assert reason_translated("something new went wrong") == "something new went wrong"


def test_every_template_has_a_portuguese_translation():
    with translation.override("pt-br"):
        untranslated = [template for template in TEMPLATES if translation.gettext(template) == template]
    assert untranslated == []


def test_a_row_error_names_its_line_in_portuguese():
    with translation.override("pt-br"):
        assert row_error_translated(RowError(3, "", "9 cells but the header has 8 columns")) == (
            "linha 3: 9 células, mas o cabeçalho tem 8 colunas"
        )
        assert row_error_translated({"line": 0, "field": "", "reason": "the file is empty"}) == (
            translation.gettext("file") + ": o arquivo está vazio"
        )


def test_the_csv_reader_writes_a_reason_the_template_matches():
    data = b"pergunta,classe\nPor que chove?,associational,extra\n"
    with ExitStack() as stack:
        table = open_table(data, "perguntas.csv", stack=stack)
        list(table.rows)
    with translation.override("pt-br"):
        assert [reason_translated(error.reason) for error in table.errors] == [
            "3 células, mas o cabeçalho tem 2 colunas"
        ]
