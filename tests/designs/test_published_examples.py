"""Each design's example files in data/ follow its authors' published layout (invented content, real shapes,
quirks included), and the demo imports them through the readers an upload of them meets."""

import csv
import io
import json

import pytest

from annotation.demo import demo_load
from annotation.designs import design_for
from annotation.models import ImportBatch

pytestmark = pytest.mark.django_db


def test_meter_s_example_is_a_dataset_jsonl_of_contexts_and_their_questions():
    [path] = design_for("meter").published_example_paths()
    for line in path.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        assert sorted(record) == ["context", "questions"]
        for question in record["questions"]:
            assert sorted(question) == sorted(
                ["ladder", "question", "answer", *(f"option_{i}" for i in range(5))]
            )
            assert isinstance(question["answer"], int) and 0 <= question["answer"] <= 4


def test_causalbench_s_examples_are_the_three_parts_with_their_own_id_headers():
    headers = {}
    for path in design_for("causalbench").published_example_paths():
        rows = list(csv.reader(io.StringIO(path.read_text(encoding="utf-8"))))
        headers[path.name] = rows[0][0]
        assert {"Question", "Question Type", "Ground Truth", "Explanation"} <= set(rows[0])
        assert all(row[rows[0].index("Question Type")].lower().startswith("from ") for row in rows[1:])
    assert headers == {
        "CausalBench_Text_Part.csv": "Scenario ID",
        "CausalBench_Math_Part.csv": "Scenario_ID",
        "CausalBench_Code_Part.csv": "Causal_Scenario_ID",
    }


def test_causalitycheck_s_examples_are_json_arrays_some_not_strict():
    not_strict = 0
    for path in design_for("causalitycheck").published_example_paths():
        text = path.read_text(encoding="utf-8")
        assert text.lstrip().startswith("[")
        records = json.loads(text, strict=False)
        assert all(key == key.lower() for record in records for key in record)
        try:
            json.loads(text)
        except json.JSONDecodeError:
            not_strict += 1
    assert not_strict >= 1


def test_explica_s_example_is_one_row_per_pair_with_the_published_columns():
    [path] = design_for("explica").published_example_paths()
    header = path.read_text(encoding="utf-8").splitlines()[0].split(",")
    assert header[:3] == ["pair_id", "Sentence_A", "Sentence_B"]
    assert "additional_dimension" in header


@pytest.mark.parametrize("design", ["meter", "causalbench", "causalitycheck", "explica"])
def test_the_demo_imports_the_published_examples_through_the_common_import(design):
    project = demo_load(design).project

    batches = ImportBatch.objects.filter(project=project)
    names = {path.name for path in design_for(design).published_example_paths()}
    assert set(batches.values_list("filename", flat=True)) == names
    for batch in batches:
        assert batch.status == ImportBatch.Status.DONE, batch.errors
        assert batch.funnel["format"] == "published"
        assert batch.funnel["read"] > 0
        assert batch.funnel["published"]["groups"] + batch.funnel["published"]["items"] > 0
