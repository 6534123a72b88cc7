"""CausalityCheck's published files as they are: the seeds (a JSON array, not strict JSON) and the 16 test
cells, each row an item of its cell that asks what its task asks, with its gold label."""

import json

import pytest
from django.core.management import CommandError, call_command

from annotation.designs import design_for
from annotation.importing.published import PublishedRowsRefused
from annotation.models import ItemGroup
from annotation.projects import project_create
from designs.causalitycheck.cells import cell_of_name, published_cell_import
from tests.designs import causalitycheck_files as files

pytestmark = pytest.mark.django_db


@pytest.fixture
def causalitycheck(owner):
    return project_create(name="CausalityCheck", slug="cc-cells", design="causalitycheck", created_by=owner)


def test_the_seeds_file_is_a_json_array_with_raw_newlines_and_goes_in_whole(causalitycheck):
    data = files.seeds_file()
    with pytest.raises(json.JSONDecodeError):
        json.loads(data)

    added = design_for(causalitycheck).published_import(
        project=causalitycheck, data=data, filename="CausalProbe-H.json"
    )

    assert added.startswith("2 seeds added")
    seed = ItemGroup.objects.get(project=causalitycheck, external_id="1")
    assert seed.context == files.CONTEXTS[0]
    assert seed.metadata["answer_index"] == 1
    other = ItemGroup.objects.get(project=causalitycheck, external_id="2")
    assert other.metadata["published"] == {"source_dataset": "COPA"}


@pytest.mark.parametrize(
    "name, cell",
    [
        ("PS-OP_cleaned.json", ("op", "ps")),
        ("PU-AJ_cleaned.json", ("aj", "pu")),
        ("ID-PJ_cleaned.json", ("pj", "id")),
        ("VCP-DV_cleaned.json", ("cva", "vcr")),
        ("CausalProbe-H.json", None),
    ],
)
def test_the_cell_is_read_from_the_published_file_name(name, cell):
    assert cell_of_name(name) == cell


def test_an_answerable_judging_cell_stores_what_it_asks_and_its_gold(causalitycheck):
    report = published_cell_import(
        project=causalitycheck, data=files.array(files.aj_cell()), filename="PU-AJ_cleaned.json"
    )

    assert (report.records, report.items) == (4, 4)
    items = list(causalitycheck.items.order_by("pk"))
    assert [item.causal_class for item in items] == [
        "answerable",
        "unanswerable",
        "answerable",
        "unanswerable",
    ]
    assert all(item.metadata["task"] == "aj" and item.metadata["variant"] == "pu" for item in items)
    assert items[0].metadata["cell"] == "PU-AJ"
    assert items[1].context == "The town rationed water for a month."


def test_process_judging_keeps_corrupted_chains_as_invalid_and_rows_sharing_a_question_distinct(
    causalitycheck,
):
    published_cell_import(
        project=causalitycheck, data=files.array(files.pj_cell()), filename="ID-PJ_cleaned.json"
    )

    items = list(causalitycheck.items.order_by("pk"))
    assert len(items) == 4  # two rows per (context, question): both kept
    assert len({item.external_id for item in items}) == 4
    assert [(item.reference_answer, item.causal_class) for item in items[:2]] == [
        (files.CHAINS["correct"], "valid_chain"),
        (files.CHAINS["corrupted"], "invalid_chain"),
    ]
    assert items[1].metadata["labels"] == {
        "answer": 2,
        "causal_chain": files.CHAINS["corrupted"],
        "correctness": 0,
    }
    assert [option.role for option in items[1].options.order_by("position")] == [
        "other",
        "correct",
        "other",
        "other",
    ]


def test_causal_validity_stores_the_verdict_and_the_conclusion_it_judges(causalitycheck):
    published_cell_import(
        project=causalitycheck, data=files.array(files.dv_cell()), filename="VCP-DV_cleaned.json"
    )

    items = list(causalitycheck.items.order_by("pk"))
    assert [item.causal_class for item in items] == [
        "correct_and_reliable",
        "correct_but_prone_to_error",
        "incorrect_but_prone_to_correctness",
        "incorrect_and_unreliable",
    ]
    assert items[2].reference_answer == "A third, unrelated event."
    assert items[0].metadata["cell"] == "VCR-CVA"


def test_the_original_problem_cell_keeps_the_seed_letter(causalitycheck):
    published_cell_import(
        project=causalitycheck, data=files.array(files.op_cell()), filename="PS-OP_cleaned.json"
    )

    assert list(causalitycheck.items.values_list("causal_class", flat=True)) == ["B", "B"]


def test_a_row_without_its_task_label_is_refused_with_its_place_and_nothing_is_written(causalitycheck):
    rows = files.aj_cell()
    rows[2]["answerable"] = "maybe"

    with pytest.raises(PublishedRowsRefused) as excinfo:
        published_cell_import(project=causalitycheck, data=files.array(rows), filename="PS-AJ_cleaned.json")

    assert "line 3, answerable: must be 0/1, not 'maybe'" in str(excinfo.value)
    assert not causalitycheck.items.exists()


def test_the_command_reads_every_task_s_cell_by_its_file_name(causalitycheck, tmp_path, capsys):
    for task, rows in files.CELLS.items():
        path = tmp_path / f"PS-{task}_cleaned.json"
        path.write_bytes(files.array(rows()))
        call_command("import_questions", str(path), project=causalitycheck.slug)

    out = capsys.readouterr().out
    assert "4 records read; 1 cells and 4 items added" in out
    cells = sorted(set(causalitycheck.items.values_list("metadata__cell", flat=True)))
    assert cells == ["PS-AJ", "PS-CVA", "PS-OP", "PS-PJ"]
    assert causalitycheck.items.count() == 2 + 4 + 4 + 4


def test_the_readers_reasons_read_in_portuguese_on_the_import_page(causalitycheck, owner, client_for):
    from django.utils import translation

    from annotation.importing.reasons import reason_translated
    from annotation.models import ImportBatch
    from tests.designs.published_pages import upload_and_import

    rows = files.aj_cell()
    rows[1]["answerable"] = 7
    batch, _page = upload_and_import(
        client_for(owner), causalitycheck, "PS-AJ_cleaned.json", files.array(rows)
    )

    assert batch.status == ImportBatch.Status.FAILED
    [error] = batch.errors
    assert (error["line"], error["field"], error["reason"]) == (2, "answerable", "must be 0/1, not 7")
    with translation.override("pt-br"):
        assert reason_translated(error["reason"]) == "deve ser 0/1, não 7"
        assert reason_translated("malformed JSON array after object 3 (parse error)") == (
            "array JSON malformado depois do objeto 3 (parse error)"
        )
    assert not causalitycheck.items.exists()


def test_a_cell_imported_again_is_refused_naming_its_records_and_nothing_more_is_written(
    causalitycheck, tmp_path
):
    path = tmp_path / "PS-PJ_cleaned.json"
    path.write_bytes(files.array(files.pj_cell()))
    call_command("import_questions", str(path), project=causalitycheck.slug)

    with pytest.raises(CommandError) as excinfo:
        call_command("import_questions", str(path), project=causalitycheck.slug)

    message = str(excinfo.value)
    for line in (1, 2, 3, 4):
        assert (
            f"line {line}: the item of this record of PS-PJ_cleaned.json is already in the project" in message
        )
    assert causalitycheck.items.count() == 4
    from django.utils import translation

    from annotation.importing.reasons import reason_translated

    with translation.override("pt-br"):
        assert reason_translated(
            "the item of this record of PS-PJ_cleaned.json is already in the project"
        ) == ("o item deste registro de PS-PJ_cleaned.json já está no projeto")
        assert reason_translated("the scenario of this row is already in the project") == (
            "o cenário desta linha já está no projeto"
        )


def test_a_key_that_only_later_records_have_is_kept_as_metadata(causalitycheck):
    """The columns of a JSON array are named by its first records: a key that first appears further on is
    still each record's own, and kept."""
    rows = [{**row, "id": number} for number, row in enumerate(files.aj_cell() * 20, start=1)]
    rows[70]["annotator_note"] = "context shortened by hand"

    report = published_cell_import(
        project=causalitycheck, data=files.array(rows), filename="PS-AJ_cleaned.json"
    )

    assert report.items == 80
    assert report.kept == {"annotator_note"}
    item = causalitycheck.items.get(metadata__line=71)
    assert item.metadata["published"] == {"annotator_note": "context shortened by hand"}
