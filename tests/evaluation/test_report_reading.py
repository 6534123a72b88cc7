"""A run report reads in the page's language: class, criterion and condition keys become names; the CSV keeps
the keys for programs."""

import pytest
from django.utils import translation

from evaluation.runs.reading import reader_heading, reader_text, reader_value
from evaluation.runs.report import Table
from evaluation.templatetags.evaluation_tags import reader_rows

pytestmark = pytest.mark.django_db


def test_a_portuguese_reader_reads_names_not_keys(project):
    table = Table(
        "judge_scores",
        "Notas",
        [
            ("class", "Classe"),
            ("series", "Modelo · condição"),
            ("adherence", "adherence"),
            ("answer_by", "Por"),
        ],
        [
            {
                "class": "associational",
                "series": "qwen · class-informed",
                "adherence": 4.0,
                "answer_by": "human",
            }
        ],
    )
    with translation.override("pt-br"):
        [row] = reader_rows(table, project)
        heading = reader_heading(project, "adherence", "adherence")
        plot_label = reader_text(project)("qwen · chain-of-thought")
    assert row[0] == "associacional"
    assert row[1] == "qwen · com a classe (class-informed)"
    assert row[3] == "pessoas"
    assert heading == "Aderência à pergunta"
    assert plot_label == "qwen · cadeia de raciocínio"
    assert "associational" in table.csv(), "the CSV keeps the keys"


def test_values_that_are_not_keys_pass_through(project):
    assert reader_value(project, "class", None) is None
    assert reader_value(project, "n", 3) == 3
    with translation.override("en"):
        assert reader_value(project, "series", "m · zero-shot") == "m · zero-shot"
