"""One grading rule for both doors: the same answers, given by a live run and imported from a file, get the same
choice and score on every item; CausalityCheck's published per-cell result files import into a run of a release
of those cells, graded as a live run is, and the report gives Table 1's layout."""

import csv
import io
import json

import pytest

from annotation.designs import design_for
from annotation.models import Item
from annotation.projects import project_create
from designs.causalitycheck.cells import published_cell_import
from evaluation.models import EvalResponse, ReleaseItem
from evaluation.runs.conditions import question_of
from evaluation.runs.imported import ResultFile, ResultsRejected, run_import_results
from evaluation.runs.report import report_tables
from evaluation.runs.work import response_for
from generation.models import LLMCall, ModelEndpoint
from tests.designs import causalitycheck_files as files
from tests.evaluation.runs import release_of

pytestmark = pytest.mark.django_db

ANSWERS = ["A", "B", "C", "D", "The answer is (B).", "Resposta: A", "I cannot tell.", "b) Incorrect"]


@pytest.fixture
def released(owner):
    """A CausalityCheck project of four published PS cells, every item approved and in the test split."""
    project = project_create(
        name="CausalityCheck", slug="cc-grading", design="causalitycheck", created_by=owner
    )
    for task, rows in files.CELLS.items():
        published_cell_import(project=project, data=files.array(rows()), filename=f"PS-{task}_cleaned.json")
    project.items.update(status=Item.Status.APPROVED)
    return project, release_of(project, ratios=(0, 0, 1))


def responses_csv(rows: list[dict]) -> bytes:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=["id", "model", "condition", "repetition", "response"])
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue().encode()


def test_the_same_answers_get_the_same_score_live_and_imported(released):
    project, release = released
    records = dict(ReleaseItem.objects.filter(release=release).values_list("pk", "data"))
    rows = [
        {"id": record["id"], "model": "m", "condition": "zero-shot", "repetition": number, "response": text}
        for record in records.values()
        for number, text in enumerate(ANSWERS, start=1)
    ]
    run = run_import_results(
        project=project,
        release=release,
        name="same answers",
        files=[ResultFile("answers.csv", responses_csv(rows))],
        enqueue=False,
    )
    imported = {
        (response.release_item_id, response.repetition): response
        for response in EvalResponse.objects.filter(run=run)
    }
    endpoint = ModelEndpoint.objects.get(name="m")
    compared = 0
    for pk, record in records.items():
        for number, text in enumerate(ANSWERS, start=1):
            planned = {"release_item": pk, "condition": "zero-shot", "repetition": number}
            call = LLMCall(request={"planned": planned}, endpoint_id=endpoint.pk)
            live = response_for(run, call, record, parsed={"answer": text})
            stored = imported[(pk, number)]
            assert (live.choice, live.unparsed, live.correct) == (
                stored.choice,
                stored.unparsed,
                stored.correct,
            ), (record["metadata"], text)
            compared += 1
    assert compared == len(records) * len(ANSWERS) == 14 * 8


def test_a_model_right_on_every_task_scores_one_and_the_seed_letter_does_not(released):
    """Graded against the seed's letter, both models would score the same; graded as asked, they do not."""
    project, release = released
    design = design_for(project)
    records = dict(ReleaseItem.objects.filter(release=release).values_list("pk", "data"))
    rows = []
    for record in records.values():
        right = sorted(question_of(record, design, project.language)["correct"])[0]
        rows.append(
            {
                "id": record["id"],
                "model": "right",
                "condition": "zero-shot",
                "repetition": 1,
                "response": right,
            }
        )
        rows.append(
            {"id": record["id"], "model": "seed", "condition": "zero-shot", "repetition": 1, "response": "B"}
        )
    run = run_import_results(
        project=project,
        release=release,
        name="two models",
        # a JSON array, pretty-printed, with a raw newline inside strings: results are read as questions are
        files=[ResultFile("answers.json", json.dumps(rows, indent=2).replace("B", "\nB").encode())],
        enqueue=False,
    )
    correct = {
        model: list(
            EvalResponse.objects.filter(run=run, endpoint__name=model).values_list("correct", flat=True)
        )
        for model in ("right", "seed")
    }
    assert all(correct["right"])
    assert not all(correct["seed"])


def result_file(cell: str, model: str, rows: list[dict]) -> ResultFile:
    return ResultFile(f"{cell}res-{model}.json", json.dumps(rows, indent=2).encode())


def test_published_per_cell_results_import_and_give_table_1(released):
    project, release = released
    # The model's answers per cell, as the authors publish them: {"id": seed, "<label key>": value}, row by row.
    answers = {
        "PS-OP": [{"id": 1, "answer": 2}, {"id": 2, "answer": 3}],  # 1 of 2 right
        "PS-AJ": [
            {"id": 1, "answerable": 1},
            {"id": 1, "answerable": 0},
            {"id": 2, "answerable": 1},
            {"id": 2, "answerable": 1},
        ],  # 3 of 4
        "PS-PJ": [
            {"id": 1, "correctness": 1},
            {"id": 1, "correctness": 1},
            {"id": 2, "correctness": 0},
            {"id": 2, "correctness": 0},
        ],  # 2 of 4
        "PS-DV": [
            {"id": 1, "verdict": 1},
            {"id": 1, "verdict": 2},
            {"id": 1, "verdict": 1},
            {"id": 1, "verdict": 1},
        ],  # 2 of 4
    }
    run = run_import_results(
        project=project,
        release=release,
        name="gpt-x per cell",
        files=[result_file(cell, "gpt-x", rows) for cell, rows in answers.items()],
        enqueue=False,
    )

    responses = EvalResponse.objects.filter(run=run)
    assert responses.count() == 14
    by_task = {}
    for response in responses.select_related("release_item"):
        task = json.loads(response.release_item.data["metadata"])["task"]
        by_task.setdefault(task, []).append(response.correct)
    assert {task: (sum(values), len(values)) for task, values in by_task.items()} == {
        "op": (1, 2),
        "aj": (3, 4),
        "pj": (2, 4),
        "cva": (2, 4),
    }
    [units] = [table for table in report_tables([run]) if table.key == "unit_scores"]
    [line] = units.rows
    headings = [heading for _key, heading in units.columns]
    assert headings[:2] == ["Model · condition", "All"]
    assert [heading for heading in headings if heading in ("OP", "AJ", "PJ", "CVA", "PS")] == [
        "OP",
        "AJ",
        "PJ",
        "CVA",
        "PS",
    ]
    assert line["task:op"] == 0.5 and line["task:aj"] == 0.75 and line["task:pj"] == 0.5
    assert line["task:cva"] == 0.5 and line["variant:ps"] == pytest.approx(2.25 / 4)
    assert line["All"] == pytest.approx((0.5 + 0.75 + 0.5 + 0.5) / 4)


def test_a_published_result_row_that_matches_no_item_is_named_and_nothing_is_stored(released):
    project, release = released
    with pytest.raises(ResultsRejected) as excinfo:
        run_import_results(
            project=project,
            release=release,
            name="bad",
            files=[result_file("PS-OP", "gpt-x", [{"id": 1, "answer": 2}, {"id": 9, "answer": 1}])],
            enqueue=False,
        )
    assert "PS-OPres-gpt-x.json, row 2, id: seed '9' matches no single item of cell PS-OP" in str(
        excinfo.value
    )
    assert not EvalResponse.objects.exists()


def test_published_result_files_are_reported_per_file_as_any_results_file(released, capsys):
    """Each file's rows read and stored, and the columns its rows were read from, as the command prints them."""
    from django.core.management import call_command

    project, release = released
    answers = {
        "PS-OP": [{"id": 1, "answer": 2}, {"id": 2, "answer": 3}],
        "PS-AJ": [
            {"id": 1, "answerable": 1},
            {"id": 1, "answerable": 0},
            {"id": 2, "answerable": 1},
            {"id": 2, "answerable": 0},
        ],
    }
    run = run_import_results(
        project=project,
        release=release,
        name="per file",
        files=[result_file(cell, "gpt-x", rows) for cell, rows in answers.items()],
        enqueue=False,
    )

    by_name = {entry["name"]: entry for entry in run.imported["files"]}
    assert {name: (entry["rows"], entry["stored"], entry["refused"]) for name, entry in by_name.items()} == {
        "PS-OPres-gpt-x.json": (2, 2, 0),
        "PS-AJres-gpt-x.json": (4, 4, 0),
    }
    assert by_name["PS-AJres-gpt-x.json"]["columns"] == {"item": "id", "response": "answerable"}
    from evaluation.management.commands.import_run_results import import_lines

    assert (
        "PS-AJres-gpt-x.json (responses): 4 rows read, 4 stored, 0 conflicting, 0 duplicates, 0 refused"
        in (import_lines(run.imported))
    )
    assert "  columns used: item=id, response=answerable" in import_lines(run.imported)


def test_a_published_result_row_that_answers_an_answered_item_again_is_never_kept_silently(released):
    """A row past the cell's last matches its item by the seed's id: saying the same again is stored once, saying
    otherwise is a conflict listed with both rows (nothing is imported until a person chooses)."""
    project, release = released
    same = [{"id": 1, "answer": 2}, {"id": 2, "answer": 3}, {"id": 2, "answer": 3}]
    run = run_import_results(
        project=project, release=release, name="again", files=[result_file("PS-OP", "m", same)], enqueue=False
    )
    [entry] = run.imported["files"]
    assert (entry["rows"], entry["stored"], entry["duplicates"]) == (3, 2, 1)
    assert EvalResponse.objects.filter(run=run).count() == 2

    other = [{"id": 1, "answer": 2}, {"id": 2, "answer": 3}, {"id": 2, "answer": 1}]
    with pytest.raises(ResultsRejected) as excinfo:
        run_import_results(
            project=project,
            release=release,
            name="other",
            files=[result_file("PS-OP", "m", other)],
            enqueue=False,
        )
    assert "PS-OPres-m.json, row 3: a second response of" in str(excinfo.value)
    assert "other than PS-OPres-m.json, row 2" in str(excinfo.value)
    assert EvalResponse.objects.count() == 2  # the first run's only

    run = run_import_results(
        project=project,
        release=release,
        name="last",
        files=[result_file("PS-OP", "m", other)],
        conflicts="last",
        enqueue=False,
    )
    assert sorted(EvalResponse.objects.filter(run=run).values_list("text", flat=True)) == ["A", "B"]


def test_a_zip_of_a_model_s_result_folder_imports_every_cell_through_the_page(
    released, owner, client_for, django_capture_on_commit_callbacks
):
    """The page takes one file of responses: a zip of ``result/<MODEL>/`` stands for the cells' files it holds."""
    import zipfile

    from django.core.files.uploadedfile import SimpleUploadedFile

    from evaluation.models import ResultsImport
    from tests.evaluation.results_pages import post_results

    project, release = released
    answers = {
        "PS-OP": [{"id": 1, "answer": 2}, {"id": 2, "answer": 3}],  # 1 of 2 right
        "PS-AJ": [
            {"id": 1, "answerable": 1},
            {"id": 1, "answerable": 0},
            {"id": 2, "answerable": 1},
            {"id": 2, "answerable": 0},
        ],  # 4 of 4
        "PS-PJ": [
            {"id": 1, "correctness": 1},
            {"id": 1, "correctness": 0},
            {"id": 2, "correctness": 1},
            {"id": 2, "correctness": 1},
        ],  # 3 of 4
        "PS-DV": [
            {"id": 1, "verdict": 1},
            {"id": 1, "verdict": 2},
            {"id": 1, "verdict": 3},
            {"id": 1, "verdict": 4},
        ],
    }
    folder = io.BytesIO()
    with zipfile.ZipFile(folder, "w") as archive:
        for cell, rows in answers.items():
            archive.writestr(f"gpt-x/{cell}res-gpt-x.json", json.dumps(rows, indent=2))

    posted = post_results(
        client_for(owner),
        project,
        {
            "release": release.pk,
            "split": "test",
            "name": "gpt-x",
            "responses": SimpleUploadedFile("gpt-x.zip", folder.getvalue()),
        },
        django_capture_on_commit_callbacks,
    )

    assert posted.results_import.status == ResultsImport.Status.DONE, posted.results_import.errors
    run = posted.results_import.run
    assert [(entry["name"], entry["rows"], entry["stored"]) for entry in run.imported["files"]] == [
        (f"gpt-x.zip/gpt-x/{cell}res-gpt-x.json", len(rows), len(rows)) for cell, rows in answers.items()
    ]
    [units] = [table for table in report_tables([run]) if table.key == "unit_scores"]
    [line] = units.rows
    assert (line["task:op"], line["task:aj"], line["task:pj"], line["task:cva"]) == (0.5, 1.0, 0.75, 1.0)
    assert EvalResponse.objects.filter(run=run).count() == 14
