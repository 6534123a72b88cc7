"""Importing published files as they are: every format, the mapping proposal, value mapping and its errors,
who answered, items that come in reviewed, and questions kept whatever their length."""

import zipfile

import pytest

from annotation.importing import (
    ImportRejected,
    Mapping,
    MappingError,
    parse_columns,
    parse_values,
    propose,
)
from annotation.importing.tables import sniff_delimiter
from annotation.models import CurationDecision, DroppedRow, Item
from annotation.selectors import class_funnel
from tests.annotation import published_files as files

pytestmark = pytest.mark.django_db

PER_CLASS = {"associational": 2, "interventional": 3, "counterfactual": 3}


def imported_classes(project) -> dict:
    return {label: project.items.filter(causal_class=label).count() for label in PER_CLASS}


@pytest.mark.parametrize(
    "filename, data",
    [
        ("perguntas.csv", lambda: files.csv_text(",")),
        ("perguntas.csv", lambda: files.csv_text(";")),
        ("perguntas.tsv", lambda: files.csv_text("\t")),
        ("perguntas.txt", lambda: files.csv_text("\t")),
        ("perguntas.jsonl", files.jsonl_text),
        ("perguntas.xlsx", lambda: files.xlsx_bytes(extra_sheets=())),
        ("perguntas.parquet", files.parquet_bytes),
    ],
    ids=["csv-comma", "csv-semicolon", "tsv", "tab-separated-txt", "jsonl", "xlsx", "parquet"],
)
def test_every_format_imports_the_same_published_rows(project, filename, data):
    from annotation.importing import questions_import

    batch = questions_import(project=project, data=data(), filename=filename, length_bounds_on=False)

    assert batch.funnel["imported"] == 8, batch.errors
    assert imported_classes(project) == PER_CLASS
    item = project.items.get(external_id="cqa-004")
    assert item.reference_answer.startswith("O sono consolida")
    assert item.source == "ShareGPT"


def test_a_spreadsheet_sheet_is_chosen_by_name_and_a_wrong_name_lists_the_sheets(project):
    from annotation.importing import questions_import

    data = files.xlsx_bytes(sheet="perguntas", extra_sheets=("leia-me",))
    with pytest.raises(ImportRejected) as excinfo:
        questions_import(project=project, data=data, filename="dados.xlsx", sheet="Plan1")
    assert "no sheet 'Plan1' (the sheets are: leia-me, perguntas)" in str(excinfo.value)

    batch = questions_import(
        project=project, data=data, filename="dados.xlsx", sheet="perguntas", length_bounds_on=False
    )
    assert batch.funnel["imported"] == 8
    assert batch.funnel["format"] == "xlsx"


def test_a_hugging_face_save_to_disk_folder_is_read_without_datasets_and_keeps_its_splits(project, tmp_path):
    from annotation.importing import questions_import

    folder = files.save_to_disk_folder(tmp_path / "causal_qa_pt")
    batch = questions_import(project=project, filename=folder.name, path=folder, length_bounds_on=False)

    assert batch.funnel["imported"] == 8
    assert project.items.get(external_id="cqa-001").metadata["split"] == "train"
    assert project.items.get(external_id="cqa-008").metadata["split"] == "test"


def test_a_zip_of_parquet_splits_is_read_as_a_folder(project, tmp_path):
    import io

    import pyarrow as pa
    import pyarrow.parquet as pq

    from annotation.importing import questions_import

    archive = io.BytesIO()
    rows = files.records()
    with zipfile.ZipFile(archive, "w") as zipped:
        for split, part in (("train", rows[:6]), ("test", rows[6:])):
            buffer = io.BytesIO()
            pq.write_table(pa.Table.from_pylist(part), buffer)
            zipped.writestr(f"data/{split}-00000-of-00001.parquet", buffer.getvalue())
    batch = questions_import(
        project=project, data=archive.getvalue(), filename="causal_qa_pt.zip", length_bounds_on=False
    )

    assert batch.funnel["imported"] == 8
    assert project.items.get(external_id="cqa-007").metadata["split"] == "test"


def test_a_file_of_no_known_format_is_refused_naming_the_formats(project):
    from annotation.importing import questions_import

    with pytest.raises(ImportRejected) as excinfo:
        questions_import(project=project, data=b"\xd0\xcf\x11\xe0\x00\x00binary", filename="perguntas.xls")
    message = str(excinfo.value)
    assert "perguntas.xls" in message
    assert "CSV, TSV, JSONL, XLSX, Parquet" in message


def test_the_delimiter_is_sniffed_from_the_header():
    assert sniff_delimiter("dados.csv", "pergunta;resposta;classe") == ";"
    assert sniff_delimiter("dados.csv", "question,answer") == ","
    assert sniff_delimiter("dados.tsv", "question") == "\t"
    assert sniff_delimiter("dados.txt", "pergunta\tresposta") == "\t"


# --- the mapping --------------------------------------------------------------------------------


def test_the_mapping_is_proposed_from_portuguese_and_english_names_in_any_case():
    mapping = propose(["Pergunta", "RESPOSTA", "Classe", "respondido_por", "Fonte", "ID", "observação"])
    assert mapping.columns == {
        "question": "Pergunta",
        "causal_class": "Classe",
        "answer": "RESPOSTA",
        "answer_by": "respondido_por",
        "source": "Fonte",
        "id": "ID",
    }

    english = propose(["query", "groundtruth", "label", "answered_by", "context"])
    assert english.columns == {
        "question": "query",
        "causal_class": "label",
        "answer": "groundtruth",
        "answer_by": "answered_by",
        "context": "context",
    }
    assert propose(["Question", "Reference"]).columns["answer"] == "Reference"


def test_the_project_remembers_its_last_mapping_and_proposes_it_again(project):
    from annotation.importing import questions_import

    data = files.csv_text(header=("texto_original", "gabarito", "nivel", "quem", "origem", "codigo"))
    columns = parse_columns(
        "question=texto_original,answer=gabarito,causal_class=nivel,answer_by=quem,id=codigo"
    )
    questions_import(
        project=project, data=data, filename="a.csv", mapping=Mapping(columns=columns), length_bounds_on=False
    )
    project.refresh_from_db()

    proposed = propose(
        ["texto_original", "gabarito", "nivel", "quem", "origem", "codigo"], project.import_mapping
    )
    assert proposed.columns["question"] == "texto_original"
    assert proposed.columns["causal_class"] == "nivel"
    assert proposed.columns["source"] == "origem"  # a known name, proposed too


def test_unmapped_columns_are_kept_as_metadata_unless_left_out(project):
    from annotation.importing import questions_import

    header = ("pergunta", "classe", "dificuldade", "anotador_id")
    rows = [("Por que o céu é azul durante o dia?", "Associacional", "fácil", "a7")]
    mapping = propose(list(header))
    mapping.keep = ["dificuldade"]
    questions_import(
        project=project, data=files.csv_text(rows=rows, header=header), filename="m.csv", mapping=mapping
    )
    assert project.items.get().metadata == {"dificuldade": "fácil"}


def test_columns_and_values_are_parsed_and_mistakes_named():
    assert parse_columns("question=Pergunta, causal_class=Classe") == {
        "question": "Pergunta",
        "causal_class": "Classe",
    }
    assert parse_values("causal_class:Assoc=associational,Inter=interventional, answer_by:H=person") == {
        "causal_class": {"assoc": "associational", "inter": "interventional"},
        "answer_by": {"h": "person"},
    }
    with pytest.raises(MappingError, match="unknown field 'pergunta'"):
        parse_columns("pergunta=question")
    with pytest.raises(MappingError, match="FIELD=COLUMN"):
        parse_columns("question")
    with pytest.raises(MappingError, match="name the field first"):
        parse_values("Assoc=associational")


def test_a_mapping_naming_a_column_the_file_lacks_is_refused(project):
    from annotation.importing import questions_import

    mapping = Mapping(columns={"question": "pergunta", "answer": "gabarito"})
    with pytest.raises(ImportRejected) as excinfo:
        questions_import(project=project, data=files.csv_text(), filename="a.csv", mapping=mapping)
    assert "answer=gabarito: the file has no column 'gabarito'" in str(excinfo.value)
    assert project.items.count() == 0


# --- values ---------------------------------------------------------------------------------------


def test_class_values_match_the_labels_in_any_case_and_without_accents(project):
    from annotation.importing import questions_import

    rows = [
        (f"Pergunta causal número {n} sobre o mundo?", "", value, "", "", f"v{n}")
        for n, value in enumerate(
            [
                "Associacional",
                "ASSOCIATIONAL",
                "associativa",
                "Intervenção",
                "intervencional",
                "Contrafactual",
                "contrafactuais",
                "COUNTERFACTUAL",
            ]
        )
    ]
    batch = questions_import(
        project=project, data=files.csv_text(rows=rows), filename="v.csv", length_bounds_on=False
    )
    assert batch.funnel["imported"] == 8, batch.funnel
    assert imported_classes(project) == {"associational": 3, "interventional": 2, "counterfactual": 3}


def test_values_that_match_nothing_are_listed_with_counts_and_lines_and_stop_the_import(project):
    from annotation.importing import questions_import

    rows = [
        (f"Pergunta causal número {n} sobre o mundo?", "", value, "", "", f"v{n}")
        for n, value in enumerate(["Assoc", "Inter", "Assoc", "Contrafactual", "Assoc"])
    ]
    with pytest.raises(ImportRejected) as excinfo:
        questions_import(project=project, data=files.csv_text(rows=rows), filename="codes.csv")
    assert project.items.count() == 0
    assert excinfo.value.unknown.by_field["causal_class"] == {
        "Assoc": {"count": 3, "lines": [2, 4, 6]},
        "Inter": {"count": 1, "lines": [3]},
    }
    assert "causal_class 'Assoc': 3 row(s) (lines 2, 4, 6)" in str(excinfo.value)
    assert excinfo.value.batch.funnel["unknown_values"]["causal_class"]["Inter"]["count"] == 1


def test_skip_invalid_skips_unmatched_values_with_a_reason_row_each(project):
    from annotation.importing import questions_import

    rows = [
        (f"Pergunta causal número {n} sobre o mundo?", "", value, "", "", f"v{n}")
        for n, value in enumerate(["Assoc", "Contrafactual", "Contrafactual"])
    ]
    batch = questions_import(
        project=project, data=files.csv_text(rows=rows), filename="codes.csv", skip_invalid=True
    )
    assert batch.funnel["imported"] == 2
    dropped = batch.dropped_rows.get(stage=DroppedRow.Stage.INVALID)
    assert (dropped.line, dropped.field) == (2, "causal_class")


def test_a_file_s_own_codes_are_mapped_by_values(project):
    from annotation.importing import questions_import

    rows = [
        (f"Pergunta causal número {n} sobre o mundo?", "", value, "", "", f"v{n}")
        for n, value in enumerate(["A", "I", "C", "C"])
    ]
    mapping = propose(list(files.HEADER))
    mapping.values = parse_values("causal_class:A=associational,I=interventional,C=counterfactual")
    questions_import(
        project=project,
        data=files.csv_text(rows=rows),
        filename="codes.csv",
        mapping=mapping,
        length_bounds_on=False,
    )
    assert imported_classes(project) == {"associational": 1, "interventional": 1, "counterfactual": 2}


def test_a_value_mapped_to_a_label_the_project_lacks_is_refused(project):
    from annotation.importing import questions_import

    mapping = propose(list(files.HEADER))
    mapping.values = parse_values("causal_class:A=associativo")
    with pytest.raises(ImportRejected, match="'associativo' is not a label of the project"):
        questions_import(project=project, data=files.csv_text(), filename="a.csv", mapping=mapping)


# --- who answered, gold, length -------------------------------------------------------------------


def test_who_answered_is_imported_a_person_or_the_named_model(project):
    from annotation.importing import questions_import

    questions_import(
        project=project, data=files.xlsx_bytes(extra_sheets=()), filename="cqa.xlsx", length_bounds_on=False
    )

    by = dict(project.items.values_list("external_id", "answer_by"))
    assert by["cqa-001"] == Item.AnswerBy.HUMAN
    assert by["cqa-004"] == Item.AnswerBy.MODEL
    assert project.items.get(external_id="cqa-005").answer_provenance["model"] == "GPT-4o"
    assert project.items.get(external_id="cqa-007").answer_provenance["model"] == "gemma-3-27b"
    assert "model" not in project.items.get(external_id="cqa-008").answer_provenance


def test_the_project_page_and_the_api_show_table_3_from_imported_data(project, curator, client_for):
    from django.urls import reverse

    from annotation.importing import questions_import

    questions_import(
        project=project,
        data=files.xlsx_bytes(extra_sheets=()),
        filename="cqa.xlsx",
        length_bounds_on=False,
        as_gold=True,
        user=curator,
    )
    rows = {row["label"]: row for row in class_funnel(project)}
    assert (rows["associational"]["human"], rows["associational"]["model"]) == (2, 0)
    assert (rows["interventional"]["human"], rows["interventional"]["model"]) == (1, 2)
    assert (rows["counterfactual"]["human"], rows["counterfactual"]["model"]) == (1, 2)
    assert (rows["total"]["human_gold"], rows["total"]["model_gold"]) == (4, 4)

    client = client_for(curator)
    page = client.get(reverse("annotation:project_detail", args=[project.slug])).content.decode()
    assert "Answered by people" in page
    api = client.get(f"/api/v1/projects/{project.slug}/").json()
    assert api["answer_counts"]["interventional"] == {"count": 3, "human": 1, "model": 2, "unanswered": 0}
    assert api["answer_counts"]["counterfactual"] == {"count": 3, "human": 1, "model": 2, "unanswered": 0}


def test_items_imported_as_gold_are_approved_with_a_decision_by_the_named_user(project, curator):
    from annotation.importing import questions_import

    batch = questions_import(
        project=project,
        data=files.csv_text(),
        filename="gold.csv",
        as_gold=True,
        user=curator,
        length_bounds_on=False,
    )

    assert set(project.items.values_list("status", flat=True)) == {Item.Status.APPROVED}
    decisions = CurationDecision.objects.filter(item__project=project)
    assert decisions.count() == 8
    decision = decisions.first()
    assert (decision.curator, decision.round, decision.decision) == (
        curator,
        1,
        CurationDecision.Decision.APPROVE,
    )
    assert f"import #{batch.pk}" in decision.note


def test_gold_needs_the_reviewer_and_each_item_s_answer(project, curator):
    from annotation.importing import questions_import

    with pytest.raises(ImportRejected, match="name the user who reviewed"):
        questions_import(project=project, data=files.csv_text(), filename="gold.csv", as_gold=True)
    rows = [
        *files.CAUSAL_ROWS[:2],
        ("Por que o pão fica duro fora do saco?", "", "Associacional", "", "", "x1"),
    ]
    with pytest.raises(ImportRejected) as excinfo:
        questions_import(
            project=project, data=files.csv_text(rows=rows), filename="gold.csv", as_gold=True, user=curator
        )
    assert [(e.line, e.field) for e in excinfo.value.errors] == [(4, "answer")]


def test_without_length_bounds_every_question_is_kept_and_the_funnel_says_so(project):
    from annotation.importing import questions_import

    long_question = "Por que " + " ".join(["muito"] * 60) + " isso acontece?"
    rows = [
        *files.CAUSAL_ROWS,
        (long_question, "Porque sim.", "Associacional", "humano", "Reddit", "long"),
        ("Por quê?", "Porque sim.", "Associacional", "humano", "Reddit", "short"),
    ]
    bounded = questions_import(project=project, data=files.csv_text(rows=rows), filename="a.csv")
    assert bounded.funnel["imported"] == 8
    project.items.all().delete()

    batch = questions_import(
        project=project, data=files.csv_text(rows=rows), filename="a.csv", length_bounds_on=False
    )
    assert batch.funnel["imported"] == 10
    assert batch.funnel["length_bounds"] is False
    assert batch.dropped_rows.count() == 0


# --- the page -------------------------------------------------------------------------------------


def test_the_mapping_step_shows_the_columns_five_rows_and_the_proposal(project, curator, client_for):
    from django.core.files.uploadedfile import SimpleUploadedFile
    from django.urls import reverse

    rows = files.CAUSAL_ROWS + [
        ("Por que o trânsito piora na chuva em São Paulo?", "", "Assoc", "", "", "x9")
    ]
    upload = SimpleUploadedFile("cqa.xlsx", files.xlsx_bytes(rows=rows, extra_sheets=()))
    response = client_for(curator).post(
        reverse("annotation:import_preview", args=[project.slug]), {"file": upload}
    )

    body = response.content.decode()
    assert response.status_code == 200
    assert '<option value="pergunta" selected>' in body
    assert '<option value="respondido_por" selected>' in body
    assert body.count("<tr><td>") == 5  # five rows previewed
    assert "Associacional → associational" in body


def test_the_page_imports_with_the_mapping_the_curator_chose(
    project, curator, client_for, django_capture_on_commit_callbacks
):
    from django.core.files.uploadedfile import SimpleUploadedFile
    from django.urls import reverse

    from annotation.models import ImportBatch
    from annotation.tasks import import_questions_task

    header = ("texto", "gabarito", "nivel", "quem", "origem", "codigo")
    rows = [
        (q, a, {"Associacional": "A", "ASSOCIACIONAL": "A"}.get(c, c), by, s, i)
        for q, a, c, by, s, i in files.CAUSAL_ROWS
    ]
    upload = SimpleUploadedFile("cqa.csv", files.csv_text(rows=rows, header=header))
    form = {
        "file": upload,
        "mapping_shown": "on",
        "column_question": "texto",
        "column_answer": "gabarito",
        "column_causal_class": "nivel",
        "column_answer_by": "quem",
        "column_id": "codigo",
        "keep": ["origem"],
        "values": "causal_class:A=associational",
        "as_gold": "on",
        "no_length_bounds": "on",
    }
    with django_capture_on_commit_callbacks(execute=False):
        response = client_for(curator).post(reverse("annotation:import_list", args=[project.slug]), form)
    assert response.status_code == 302
    batch = ImportBatch.objects.get()
    import_questions_task(batch.pk)

    batch.refresh_from_db()
    assert batch.status == ImportBatch.Status.DONE, batch.errors
    assert imported_classes(project) == PER_CLASS
    assert project.items.get(external_id="cqa-001").metadata == {"origem": "Reddit"}
    assert set(project.items.values_list("status", flat=True)) == {Item.Status.APPROVED}
    page = client_for(curator).get(response["Location"]).content.decode()
    assert "length bounds off" in page
    project.refresh_from_db()
    assert project.import_mapping["columns"]["question"] == "texto"


def test_spreadsheet_cells_keep_their_kind_dates_numbers_booleans_and_gaps(project):
    import datetime
    import io

    import openpyxl

    from annotation.importing.tables import open_table

    book = openpyxl.Workbook()
    sheet = book.active
    sheet.append(["pergunta", "id", "publicada_em", "verificada", "nota"])
    sheet.append(["Por que o rio transborda na cheia?", 12, datetime.datetime(2024, 3, 5), True, 4.5])
    sheet.append(["Se chover mais, a safra melhora?", 13, None, False, None])
    sheet["E3"] = 3
    buffer = io.BytesIO()
    book.save(buffer)

    table = open_table(buffer.getvalue(), "datas.xlsx")
    rows = list(table.rows)
    assert table.columns == ["pergunta", "id", "publicada_em", "verificada", "nota"]
    assert rows[0] == (
        2,
        {
            "pergunta": "Por que o rio transborda na cheia?",
            "id": 12,
            "publicada_em": datetime.datetime(2024, 3, 5),
            "verificada": True,
            "nota": 4.5,
        },
    )
    assert rows[1] == (
        3,
        {
            "pergunta": "Se chover mais, a safra melhora?",
            "id": 13,
            "publicada_em": None,
            "verificada": False,
            "nota": 3,
        },
    )


def test_a_damaged_parquet_file_is_refused_with_a_reason_not_an_error_page(project, curator, client_for):
    from django.core.files.uploadedfile import SimpleUploadedFile
    from django.urls import reverse

    from annotation.importing import questions_import

    damaged = files.parquet_bytes()[:-200] + b"PAR1"
    with pytest.raises(ImportRejected) as excinfo:
        questions_import(project=project, data=damaged, filename="cortado.parquet")
    assert "Parquet" in str(excinfo.value) or "could not be read" in str(excinfo.value)

    response = client_for(curator).post(
        reverse("annotation:import_preview", args=[project.slug]),
        {"file": SimpleUploadedFile("cortado.parquet", damaged)},
    )
    assert response.status_code == 200
    assert 'role="alert"' in response.content.decode()
