"""JSON arrays are a file format of every import: read incrementally, raw control characters in strings
accepted (as CausalityCheck publishes them), and a file of no known format refused naming the formats."""

import io
import json

import pytest

from annotation.importing import ImportRejected, questions_import
from annotation.importing.errors import ImportFileError
from annotation.importing.jsonarray import ControlCharacters
from annotation.importing.tables import open_table

pytestmark = pytest.mark.django_db

RECORDS = [
    {
        "id": 11,
        "question": "Por que a chuva forte fez o rio transbordar na cidade?",
        "pearl_class": "associational",
        "context": "Choveu três dias.\nO rio subiu.",
    },
    {
        "id": 12,
        "question": "O que aconteceria se a barragem tivesse sido aberta antes?",
        "pearl_class": "counterfactual",
        "context": "A barragem ficou fechada.",
    },
]


def pretty_array_with_raw_newlines() -> bytes:
    """Pretty-printed like CausalityCheck's files, with a raw newline inside a string (not strict JSON)."""
    text = json.dumps(RECORDS, ensure_ascii=False, indent=4)
    assert "\\n" in text
    return text.replace("\\n", "\n").encode("utf-8")


def test_a_pretty_printed_json_array_with_raw_newlines_imports_every_object(project):
    data = pretty_array_with_raw_newlines()
    with pytest.raises(json.JSONDecodeError):
        json.loads(data)  # a strict parser refuses it

    batch = questions_import(project=project, data=data, filename="perguntas.json", length_bounds_on=False)

    assert batch.funnel["imported"] == 2, batch.errors
    assert batch.funnel["format"] == "json"
    item = project.items.get(external_id="11")
    assert item.context == "Choveu três dias.\nO rio subiu."
    assert item.causal_class == "associational"


def test_a_json_array_is_read_from_a_path_as_the_worker_reads_an_upload(project, tmp_path):
    path = tmp_path / "perguntas.json"
    path.write_bytes(pretty_array_with_raw_newlines())

    batch = questions_import(project=project, filename=path.name, path=path, length_bounds_on=False)

    assert batch.funnel["imported"] == 2, batch.errors


def test_an_element_that_is_not_an_object_is_reported_by_its_place_in_the_array(project):
    data = json.dumps([RECORDS[0], 7, RECORDS[1]]).encode()

    with pytest.raises(ImportRejected) as excinfo:
        questions_import(project=project, data=data, filename="perguntas.json")

    assert "line 2: expected a JSON object, found a number" in str(excinfo.value)


def test_an_array_cut_short_names_the_last_object_read_whole():
    data = json.dumps(RECORDS).encode()[:-40]

    with pytest.raises(ImportFileError) as excinfo:
        list(open_table(data, "perguntas.json").rows)

    assert "malformed JSON array after object 1" in str(excinfo.value)


def test_control_characters_are_escaped_only_inside_strings_whatever_the_read_size():
    raw = b'[\n\t{"a": "x\ny\\"\tz\\\\", "b": "\\\\\\"\n"}\n]'
    for size in (1, 2, 3, 7, 1000):
        reader = ControlCharacters(io.BytesIO(raw))
        parts = []
        while part := reader.read(size):
            parts.append(part)
        assert json.loads(b"".join(parts)) == [{"a": 'x\ny"\tz\\', "b": '\\"\n'}], size


def test_a_large_array_is_read_a_little_at_a_time():
    """The reader asks the file for small blocks: a large array is never read whole."""
    records = [{"id": number, "question": "Por que o céu é azul de dia?"} for number in range(20_000)]
    data = json.dumps(records).encode()
    asked = []

    class Watched(io.BytesIO):
        def read(self, size=-1):
            asked.append(size)
            return super().read(size)

    from annotation.importing.tables import _json_array_table

    table = _json_array_table(Watched(data))
    first = next(table.rows)

    assert first == (1, records[0])
    assert max(asked) < len(data) / 2


@pytest.mark.parametrize("filename", ["perguntas.xml", "perguntas.yaml", "perguntas.pdf", "dados.docx"])
def test_a_file_of_no_known_format_is_refused_naming_the_formats(project, filename):
    with pytest.raises(ImportRejected) as excinfo:
        questions_import(project=project, data=b"<perguntas></perguntas>", filename=filename)

    message = str(excinfo.value)
    assert filename in message
    assert "CSV, TSV, JSONL, XLSX, Parquet, JSON (an array of objects)" in message
