"""Importing source questions: the funnel, every kind of bad input, idempotence, the page and the command."""

import io
import json
import subprocess
import sys

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from annotation.importing import ImportRejected, questions_import
from annotation.models import DroppedRow, ImportBatch, Item
from annotation.tasks import import_questions_task

pytestmark = pytest.mark.django_db


def csv_bytes(
    rows: list[list[str]], header=("question", "causal_class", "is_causal", "id", "topic")
) -> bytes:
    import csv
    import io

    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(header)
    writer.writerows(rows)
    return buffer.getvalue().encode("utf-8")


def synthetic_rows() -> list[list[str]]:
    """A file whose funnel is known: 20 rows → 18 causal → 15 unique → 12 in length → 12 imported.

    Word counts of the 15 unique rows: 2, 3 (too short), 5×6, 6×6, 30 (too long by Q3 + 1.5·IQR):
    sorted [2, 3, 5, 5, 5, 5, 5, 5, 6, 6, 6, 6, 6, 6, 30]; Q1 = 5, Q3 = 6, upper bound 7.5.
    """
    rows = []
    for n in range(6):
        rows.append([f"Por que isso acontece {n}?", "associational", "true", f"a{n}", "Educação"])  # 5 words
    for n in range(6):
        rows.append([f"Se eu estudar mais, passo {n}?", "interventional", "", f"b{n}", "Educação"])  # 6 words
    rows.append(["Por quê?", "associational", "", "c1", ""])  # 2 words
    rows.append(["Por que chove?", "associational", "", "c2", ""])  # 3 words
    rows.append([" ".join(["palavra"] * 29) + " porquê?", "counterfactual", "", "c3", ""])  # 30 words
    rows.append(["POR QUE isso acontece 0", "associational", "", "d1", ""])  # duplicate of a0 once normalised
    rows.append(["por que isso   acontece 1 ?!", "associational", "", "d2", ""])  # duplicate of a1
    rows.append(["Se eu tivesse estudado, teria passado?", "counterfactual", "", "a2", ""])  # same id as a2
    rows.append(["Qual é a capital do Brasil hoje?", "", "false", "n1", ""])  # not causal
    rows.append(["Que horas são agora no Brasil?", "", "0", "n2", ""])  # not causal
    return rows


def test_funnel_counts_on_a_file_whose_counts_are_known(project):
    batch = questions_import(project=project, data=csv_bytes(synthetic_rows()), filename="synthetic.csv")

    funnel = batch.funnel
    assert (funnel["read"], funnel["causal"], funnel["unique"], funnel["in_length"], funnel["imported"]) == (
        20,
        18,
        15,
        12,
        12,
    )
    assert funnel["invalid"] == 0
    assert funnel["bounds"] == {"min_words": 4, "max_words": 7.5, "q1": 5.0, "q3": 6.0}
    assert project.items.count() == 12
    stages = sorted(batch.dropped_rows.values_list("stage", flat=True))
    assert stages == sorted(["not_causal"] * 2 + ["duplicate"] * 3 + ["too_short"] * 2 + ["too_long"])
    duplicate = batch.dropped_rows.get(external_id="d1")
    assert duplicate.reason == "same text as line 2"
    assert batch.dropped_rows.get(external_id="a2", stage="duplicate").reason == "same id as line 4"


def test_accents_are_kept_when_finding_duplicates(project):
    data = csv_bytes(
        [["Por que a maçã cai da árvore?", "", "", "", ""], ["Por que a maca cai da arvore?", "", "", "", ""]]
    )
    batch = questions_import(project=project, data=data, filename="accents.csv")
    assert batch.funnel["unique"] == 2


def test_reimporting_the_same_file_creates_no_duplicates(project):
    data = csv_bytes(synthetic_rows())
    questions_import(project=project, data=data, filename="synthetic.csv")
    second = questions_import(project=project, data=data, filename="synthetic.csv")

    assert second.funnel["imported"] == 0
    assert second.funnel["already_present"] == 12
    assert project.items.count() == 12
    assert second.dropped_rows.filter(stage=DroppedRow.Stage.ALREADY_PRESENT).count() == 12


def test_rows_matching_existing_items_by_external_id_are_not_imported_again(project):
    questions_import(
        project=project,
        data=csv_bytes([["Por que isso acontece assim?", "", "", "x1", ""]]),
        filename="a.csv",
    )
    batch = questions_import(
        project=project,
        data=csv_bytes([["Um texto diferente com o mesmo id?", "", "", "x1", ""]]),
        filename="b.csv",
    )
    assert batch.funnel["imported"] == 0
    assert batch.dropped_rows.get().reason.startswith("same id as item #")


def test_jsonl_with_portuguese_class_names_and_answers(project):
    lines = [
        {
            "question": "Por que o desemprego sobe na crise?",
            "causal_class": "associativa",
            "answer": "Porque…",
        },
        {"question": "Se o governo cortar juros, o emprego sobe?", "causal_class": "Intervencional"},
        {
            "question": "Se eu tivesse feito medicina, seria feliz?",
            "causal_class": "contrafactual",
            "extra": "kept",
        },
    ]
    data = "\n".join(json.dumps(line, ensure_ascii=False) for line in lines).encode()
    questions_import(project=project, data=data, filename="questions.jsonl")

    items = {item.causal_class: item for item in project.items.all()}
    assert set(items) == {"associational", "interventional", "counterfactual"}
    answered = items["associational"]
    assert answered.reference_answer == "Porque…"
    assert (answered.status, answered.round, answered.answer_by) == (
        Item.Status.IN_REVIEW,
        1,
        Item.AnswerBy.HUMAN,
    )
    assert (items["interventional"].status, items["interventional"].round) == (Item.Status.PENDING, 0)
    assert items["counterfactual"].metadata == {"extra": "kept"}


def test_a_csv_with_a_byte_order_mark_is_read(project):
    data = b"\xef\xbb\xbf" + csv_bytes([["Por que o céu é azul de dia?", "associational", "", "", ""]])
    batch = questions_import(project=project, data=data, filename="bom.csv")
    assert batch.funnel["imported"] == 1


def test_topics_named_in_the_file_are_created_once(project):
    questions_import(project=project, data=csv_bytes(synthetic_rows()), filename="synthetic.csv")
    assert list(project.topics.values_list("label", flat=True)) == ["Educação"]
    assert project.items.filter(topic__label="Educação").count() == 12


# --- bad input: each error names the line, the field and the reason; nothing is imported -----------


def rejected(project, data: bytes, filename: str = "bad.csv") -> ImportRejected:
    with pytest.raises(ImportRejected) as excinfo:
        questions_import(project=project, data=data, filename=filename)
    assert project.items.count() == 0
    batch = ImportBatch.objects.get(pk=excinfo.value.batch.pk)
    assert batch.status == ImportBatch.Status.FAILED
    return excinfo.value


def test_a_missing_question_column_is_named(project):
    error = rejected(project, b"pergunta_errada,causal_class\nPor que sim?,associational\n").errors[0]
    assert (error.line, error.field) == (1, "question")
    assert "required column is missing" in error.reason


def test_an_unknown_class_names_the_row_and_the_allowed_values(project):
    data = csv_bytes(
        [
            ["Por que isso acontece tanto?", "associational", "", "", ""],
            ["Por que chove tanto aqui?", "causal-ish", "", "", ""],
        ]
    )
    exc = rejected(project, data)
    assert [(e.line, e.field) for e in exc.errors] == [(3, "causal_class")]
    assert "unknown class 'causal-ish'" in exc.errors[0].reason
    assert "associational, interventional, counterfactual" in exc.errors[0].reason
    assert "line 3, causal_class" in str(exc)


def test_invalid_utf8_names_the_line(project):
    data = csv_bytes([["Por que isso acontece tanto?", "", "", "", ""]]) + b"Por que o caf\xe9 acorda?,,,,\n"
    exc = rejected(project, data)
    assert exc.errors[0].line == 3
    assert "invalid UTF-8" in exc.errors[0].reason


def test_an_empty_file_is_refused(project):
    assert "empty" in rejected(project, b"").errors[0].reason
    assert "empty" in rejected(project, b"  \n\n").errors[0].reason


def test_a_malformed_json_line_is_named(project):
    data = b'{"question": "Por que isso acontece tanto?"}\n{"question": "Por que\n'
    exc = rejected(project, data, filename="bad.jsonl")
    assert exc.errors[0].line == 2
    assert "malformed JSON" in exc.errors[0].reason


def test_an_empty_question_and_a_bad_boolean_are_named(project):
    data = csv_bytes(
        [["", "associational", "", "", ""], ["Por que isso acontece tanto?", "", "talvez", "", ""]]
    )
    exc = rejected(project, data)
    assert [(e.line, e.field) for e in exc.errors] == [(2, "question"), (3, "is_causal")]


def test_skip_invalid_imports_the_valid_rows_and_lists_the_invalid(project):
    data = csv_bytes(synthetic_rows() + [["Por que chove tanto aqui?", "nonsense", "", "bad1", ""]])
    data += b"Por que o caf\xe9 acorda tanto?,,,,\n"
    batch = questions_import(project=project, data=data, filename="mixed.csv", skip_invalid=True)

    assert batch.funnel["invalid"] == 2
    assert batch.funnel["read"] == 22
    assert batch.funnel["imported"] == 12
    invalid = batch.dropped_rows.filter(stage=DroppedRow.Stage.INVALID).order_by("line")
    assert [(row.line, row.field) for row in invalid] == [(22, "causal_class"), (23, "")]


# --- the page and the command --------------------------------------------------------------------


def test_a_curator_uploads_a_file_and_sees_the_funnel(
    project, curator, client_for, django_capture_on_commit_callbacks
):
    client = client_for(curator)
    upload = SimpleUploadedFile("synthetic.csv", csv_bytes(synthetic_rows()), content_type="text/csv")
    url = reverse("annotation:import_list", args=[project.slug])
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = client.post(url, {"file": upload})
    assert response.status_code == 302
    assert len(callbacks) == 1  # the task is enqueued once the batch is committed
    batch = ImportBatch.objects.get()
    assert batch.status == ImportBatch.Status.QUEUED

    import_questions_task(batch.pk)  # what the worker runs

    page = client.get(response["Location"])
    assert page.status_code == 200
    body = page.content.decode()
    assert "rows read" in body and ">12<" in body
    csv_response = client.get(reverse("annotation:import_dropped_csv", args=[project.slug, batch.pk]))
    lines = b"".join(csv_response.streaming_content).decode().splitlines()
    assert lines[0] == "line,stage,field,reason,id,question"
    assert len(lines) == 1 + 8


def test_the_page_lists_the_errors_of_a_rejected_file(project, curator, client_for):
    client = client_for(curator)
    upload = SimpleUploadedFile("bad.csv", b"question,causal_class\nPor que sim mesmo?,weird\n")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(
            "annotation.importing.service.import_enqueue", lambda batch_id: None
        )  # run by hand below
        client.post(reverse("annotation:import_list", args=[project.slug]), {"file": upload})
    batch = ImportBatch.objects.get()
    import_questions_task(batch.pk)
    body = client.get(reverse("annotation:import_detail", args=[project.slug, batch.pk])).content.decode()
    assert "Nothing was imported" in body
    assert "line 2" in body and "causal_class" in body and "unknown class" in body


def test_polling_stops_when_the_import_is_finished(project, curator, client_for):
    batch = questions_import(project=project, data=csv_bytes(synthetic_rows()), filename="s.csv")
    response = client_for(curator).get(
        reverse("annotation:import_detail", args=[project.slug, batch.pk]), HTTP_HX_REQUEST="true"
    )
    assert response.status_code == 286
    assert "<html" not in response.content.decode()


@pytest.mark.django_db(transaction=True)
def test_the_command_prints_the_funnel_as_json(project, tmp_path):
    from tests.workers import database_url_for_current_connection

    path = tmp_path / "synthetic.csv"
    path.write_bytes(csv_bytes(synthetic_rows()))
    env = {"DATABASE_URL": database_url_for_current_connection()}
    result = run_manage(["import_questions", str(path), "--project", project.slug, "--json"], env)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert {k: report[k] for k in ("read", "causal", "unique", "in_length", "imported", "invalid")} == {
        "read": 20,
        "causal": 18,
        "unique": 15,
        "in_length": 12,
        "imported": 12,
        "invalid": 0,
    }

    bad = tmp_path / "bad.csv"
    bad.write_bytes(b"question,causal_class\nPor que sim mesmo?,weird\n")
    result = run_manage(["import_questions", str(bad), "--project", project.slug], env)
    assert result.returncode != 0
    assert "line 2, causal_class: unknown class 'weird'" in result.stderr


def run_manage(args, env_extra):
    import os

    env = {**os.environ, **env_extra}
    return subprocess.run(
        [sys.executable, "manage.py", *args], capture_output=True, text=True, env=env, timeout=120
    )


def test_the_command_reads_the_file_from_its_path_not_whole_into_memory(project, tmp_path, monkeypatch):
    """Like the worker with an upload (import memory stays flat): the rows are read in chunks from the
    path; the whole file is read as bytes only for a design with a reader of its published layout."""
    from pathlib import Path

    from django.core.management import call_command

    path = tmp_path / "synthetic.csv"
    path.write_bytes(csv_bytes(synthetic_rows()))

    def refuse(self):
        raise AssertionError(f"{self} was read whole")

    monkeypatch.setattr(Path, "read_bytes", refuse)
    call_command("import_questions", str(path), "--project", project.slug, "--json", stdout=io.StringIO())
    assert project.items.count() == 12
