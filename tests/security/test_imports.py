"""Imports under concurrency and bad input: two imports of the same file at once store each row once, and bad
files end with a message naming the line and the problem, never an exception or SQL text."""

import contextlib
import csv
import io
import json
import threading

import pytest
from django.db import connection

from annotation.importing import ImportRejected, questions_import
from annotation.models import ImportBatch, Item, Project

CLASSES = ["associational", "interventional", "counterfactual"]


def questions_csv(n: int) -> bytes:
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(["pergunta", "classe", "id"])
    for number in range(n):
        writer.writerow(
            [f"Por que a chuva de número {number} molha a rua?", CLASSES[number % 3], f"q{number}"]
        )
    return buffer.getvalue().encode()


@pytest.mark.django_db(transaction=True)
def test_two_imports_of_the_same_file_at_once_store_every_row_once():
    """Both imports read the file; then each waits (up to 3 s) for the other to have planned before it writes.
    Unlocked, both plan against an empty project and write every row twice; locked, the second plans after the
    first has written, and finds every row already present."""
    project = Project.objects.create(name="Concorrência", slug="concorrencia")
    data = questions_csv(200)
    both_planned = threading.Barrier(2, timeout=3)
    batches, failures = [], []

    def progress(stage):
        if stage == "writing":
            # the other import waits for the project: this one writes alone, as it should
            with contextlib.suppress(threading.BrokenBarrierError):
                both_planned.wait()

    def one_import():
        try:
            batches.append(
                questions_import(project=project, data=data, filename="perguntas.csv", progress=progress)
            )
        except Exception as exc:  # noqa: BLE001 - reported by the assertion below
            failures.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=one_import) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert failures == []
    assert Item.objects.filter(project=project).count() == 200
    assert sorted(batch.funnel["imported"] for batch in batches) == [0, 200]
    assert sorted(batch.funnel["already_present"] for batch in batches) == [0, 200]


@pytest.mark.django_db
def test_a_file_whose_rows_are_all_invalid_is_refused_with_their_lines(project):
    data = b"pergunta,classe\n,associational\n,interventional\n"
    with pytest.raises(ImportRejected) as raised:
        questions_import(project=project, data=data, filename="vazias.csv")
    batch = ImportBatch.objects.get(pk=raised.value.batch.pk)
    assert batch.status == ImportBatch.Status.FAILED
    assert [error["line"] for error in batch.errors] == [2, 3]


@pytest.mark.django_db
def test_all_invalid_rows_skipped_store_a_funnel_without_infinity(project):
    data = b"pergunta,classe\n,associational\n,interventional\n"
    batch = questions_import(project=project, data=data, filename="vazias.csv", skip_invalid=True)
    batch.refresh_from_db()
    assert batch.status == ImportBatch.Status.DONE
    assert batch.funnel["imported"] == 0
    assert batch.funnel["bounds"]["max_words"] is None


@pytest.mark.django_db
def test_a_field_over_its_size_limit_is_an_error_naming_the_line_and_the_field(project):
    huge_context = "Contexto longo. " * 10_000  # 160,000 characters
    lines = [
        json.dumps({"question": "Por que a chuva molha a rua da cidade?", "context": "curto"}),
        json.dumps({"question": "Por que o vento derruba as folhas secas?", "context": huge_context}),
    ]
    data = "\n".join(lines).encode()
    with pytest.raises(ImportRejected) as raised:
        questions_import(project=project, data=data, filename="grande.jsonl")
    [error] = raised.value.errors
    assert (error.line, error.field) == (2, "context")
    assert "159,999 characters (at most 100,000)" in error.reason  # the reader trims the last space
    batch = questions_import(project=project, data=data, filename="grande.jsonl", skip_invalid=True)
    assert batch.funnel["imported"] == 1
    assert not Item.objects.filter(project=project, context=huge_context).exists()


@pytest.mark.django_db
def test_the_uploaded_file_is_deleted_once_the_import_is_done(project, client_for, owner, monkeypatch):
    from django.core.files.uploadedfile import SimpleUploadedFile
    from django.urls import reverse

    from annotation.tasks import import_questions_task

    monkeypatch.setattr("annotation.importing.service.import_enqueue", lambda batch_id: None)
    upload = SimpleUploadedFile("perguntas.csv", questions_csv(5), content_type="text/csv")
    client_for(owner).post(reverse("annotation:import_list", args=[project.slug]), {"file": upload})
    batch = ImportBatch.objects.get()
    stored = batch.source_file.path
    import_questions_task(batch.pk)
    batch.refresh_from_db()
    assert batch.status == ImportBatch.Status.DONE and not batch.source_file
    assert not __import__("os").path.exists(stored)


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("name", "data", "line", "problem"),
    [
        ("so-cabecalho.csv", b"pergunta,classe\n", 1, "no rows after its header"),
        ("nul.csv", b"pergunta,classe\nPor que\x00 chove tanto no inverno?,associational\n", 2, "NUL byte"),
        (
            "fundo.jsonl",
            b'{"question": "Por que chove tanto no inverno?"}\n' + b"[" * 100_000 + b"]" * 100_000 + b"\n",
            2,
            "nested too deeply",
        ),
    ],
)
def test_a_bad_file_is_refused_with_the_line_and_the_problem(project, name, data, line, problem):
    with pytest.raises(ImportRejected) as raised:
        questions_import(project=project, data=data, filename=name)
    [error] = raised.value.errors
    assert error.line == line and problem in error.reason
    assert not Item.objects.filter(project=project).exists()


@pytest.mark.django_db
def test_a_utf16_csv_as_spreadsheets_save_it_is_read(project):
    data = "pergunta,classe\nPor que chove tanto no inverno do sul?,associational\n".encode("utf-16")
    batch = questions_import(project=project, data=data, filename="planilha.csv")
    assert batch.funnel["imported"] == 1
