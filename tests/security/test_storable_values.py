"""Values a file brings are stored as the database can hold them, in every format: a float NaN or ±Infinity
becomes null (jsonb has no such number: PostgreSQL refused the whole import), binary text is decoded as UTF-8 or
refused naming its column and row, never stored as Python's ``b'…'``."""

import io
import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from annotation.importing import ImportRejected, questions_import
from annotation.importing.tables import open_table
from annotation.models import Item

pytestmark = pytest.mark.django_db(transaction=True)

NAN, INF = float("nan"), float("inf")


def parquet(columns: dict) -> bytes:
    buffer = io.BytesIO()
    pq.write_table(pa.table(columns), buffer)
    return buffer.getvalue()


def questions(n=3):
    return [f"Por que a chuva número {k} molha a rua?" for k in range(n)]


@pytest.fixture
def target(owner):
    from annotation.models import Membership, Project

    project = Project.objects.create(name="Valores", slug="valores")
    Membership.objects.create(project=project, user=owner, role=Membership.Role.OWNER)
    return project


def stored_metadata(project, key):
    return [item.metadata.get(key) for item in Item.objects.filter(project=project).order_by("pk")]


def test_nan_and_infinity_in_a_parquet_column_become_null(target):
    data = parquet(
        {
            "question": questions(),
            "causal_class": ["associational"] * 3,
            "score": [NAN, INF, 0.5],
            "scores": [[1.0, -INF], [NAN], []],
        }
    )
    questions_import(project=target, data=data, filename="q.parquet")
    assert stored_metadata(target, "score") == [None, None, 0.5]
    assert stored_metadata(target, "scores") == [[1.0, None], [None], []]


def test_nan_and_infinity_in_a_jsonl_file_become_null(target):
    lines = [
        f'{{"question": "{q}", "causal_class": "associational", "score": {v}, "nested": {{"x": {v}}}}}'
        for q, v in zip(questions(), ["NaN", "Infinity", "-Infinity"])
    ]
    questions_import(project=target, data="\n".join(lines).encode(), filename="q.jsonl")
    assert stored_metadata(target, "score") == [None, None, None]
    assert stored_metadata(target, "nested") == [{"x": None}] * 3


def test_a_binary_column_is_stored_as_its_utf8_text(target):
    data = parquet(
        {
            "question": pa.array([q.encode() for q in questions()], type=pa.binary()),
            "causal_class": ["associational"] * 3,
            "note": pa.array([b"nota", "ação".encode(), None], type=pa.binary()),
        }
    )
    questions_import(project=target, data=data, filename="q.parquet")
    stored = list(Item.objects.filter(project=target).order_by("pk").values_list("question", flat=True))
    assert stored == questions()
    assert stored_metadata(target, "note")[:2] == ["nota", "ação"]


def test_a_binary_value_that_is_not_utf8_is_refused_naming_column_and_row(target):
    data = parquet(
        {
            "question": questions(),
            "causal_class": ["associational"] * 3,
            "blob": pa.array([b"ok", b"\xff\xfe\x00", b"ok"], type=pa.binary()),
        }
    )
    with pytest.raises(ImportRejected) as rejected:
        questions_import(project=target, data=data, filename="q.parquet")
    error = rejected.value.errors[0]
    assert (error.line, error.field) == (2, "blob"), error
    assert "not UTF-8" in error.reason
    assert not Item.objects.filter(project=target).exists()


def test_every_reader_gives_finite_values_only():
    rows = [{"question": "Q?", "x": NAN}, {"question": "R?", "x": INF}]
    jsonl = "\n".join(json.dumps(row) for row in rows).encode()  # json.dumps writes NaN and Infinity
    for name, data in (
        ("a.jsonl", jsonl),
        ("a.parquet", parquet({"question": ["Q?", "R?"], "x": [NAN, INF]})),
    ):
        table = open_table(data, name)
        assert [record["x"] for _line, record in table.rows] == [None, None], name
        table = open_table(data, name)
        assert list(table.column_chunks(10, ["x"]))[0][1]["x"] == [None, None], name
