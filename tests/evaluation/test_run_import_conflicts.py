"""Results from elsewhere never overwrite: the published Causal_QA.PT shapes (the reference answer scored within
each model's evaluation, several judges, rankings in place columns) go in as one run whose report gives the
paper's Figures 4–6 as computed by hand from the rows; a row that collides with another is listed with both
lines, and the person chooses to keep the first, the last or both."""

import csv
import io
from statistics import mean

import openpyxl
import pytest
from django.urls import reverse

from annotation.models import Item
from evaluation.models import EvalResponse, EvalRun, JudgeScore, Ranking
from evaluation.runs.imported import ResultFile, ResultsRejected, run_import_results
from evaluation.runs.report import report_tables
from tests.evaluation.runs import release_of
from tests.factories import ItemFactory

pytestmark = pytest.mark.django_db

MODELS = ("gemma-3-27b", "gpt-5-mini")
CONDITIONS = ("class-agnostic", "class-informed")
CRITERIA = ("aderência", "fluência")  # as the published file names them
ITEMS = [  # id, class, who wrote the reference answer
    ("cqa-1", "associational", Item.AnswerBy.HUMAN),
    ("cqa-2", "interventional", Item.AnswerBy.MODEL),
    ("cqa-3", "counterfactual", Item.AnswerBy.HUMAN),
    ("cqa-4", "associational", Item.AnswerBy.MODEL),
    ("cqa-5", "interventional", Item.AnswerBy.HUMAN),
    ("cqa-6", "counterfactual", Item.AnswerBy.MODEL),
]
JUDGE, SECOND_JUDGE = "gpt-5.1", "gpt-4o"


@pytest.fixture
def published(project):
    for external_id, causal_class, by in ITEMS:
        ItemFactory(
            project=project,
            status=Item.Status.APPROVED,
            external_id=external_id,
            causal_class=causal_class,
            answer_by=by,
            question=f"Por que acontece o caso {external_id}?",
            reference_answer=f"Porque a causa do caso {external_id} age sobre o efeito.",
        )
    return release_of(project, ratios=(0, 0, 1))


def csv_file(name, header, rows) -> ResultFile:
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(header)
    writer.writerows(rows)
    return ResultFile(name, buffer.getvalue().encode("utf-8"))


def xlsx_file(name, header, rows) -> ResultFile:
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.append(list(header))
    for row in rows:
        sheet.append(list(row))
    buffer = io.BytesIO()
    book.save(buffer)
    return ResultFile(name, buffer.getvalue())


def responses_rows():
    return [
        (item, model, condition, f"Resposta de {model} ({condition}) ao caso {item}: a causa age.")
        for item, _c, _b in ITEMS
        for model in MODELS
        for condition in CONDITIONS
    ]


def score_rows():
    """One row per (item, model, answer scored, criterion): the model's two answers and the reference answer,
    scored within each model's evaluation (the reference's scores differ between the two), by the main judge;
    a second judge scores some answers again."""
    rows = []
    for i, (item, _c, _b) in enumerate(ITEMS):
        for m, model in enumerate(MODELS):
            for k, criterion in enumerate(CRITERIA):
                for c, condition in enumerate(CONDITIONS):
                    score = 1 + (i * 3 + m * 2 + c + k) % 5
                    rows.append((item, model, condition, criterion, score, "Segue a pergunta.", JUDGE))
                reference = 1 + (i * 2 + m + k * 3) % 5
                rows.append((item, model, "referência", criterion, reference, "A referência.", JUDGE))
    for item in ("cqa-1", "cqa-2"):  # a second judge: the same answers, other scores
        rows += [
            (item, "gemma-3-27b", "class-agnostic", "aderência", 5, "Outro juiz.", SECOND_JUDGE),
            (item, "gemma-3-27b", "referência", "aderência", 1, "Outro juiz.", SECOND_JUDGE),
        ]
    return rows


SCORE_HEADER = ("id", "modelo", "avaliado", "critério", "nota", "justificativa", "juiz")
PLACES = {  # (item, model) → the three places, best first
    (item, model): [
        ("referência", "class-agnostic", "class-informed"),
        ("class-informed", "referência", "class-agnostic"),
    ][(i + m) % 2]
    for i, (item, _c, _b) in enumerate(ITEMS)
    for m, model in enumerate(MODELS)
}


def ranking_rows():
    return [(item, model, *places, JUDGE) for (item, model), places in PLACES.items()]


def published_files():
    return [
        xlsx_file("respostas.xlsx", ("id", "modelo", "condicao", "resposta"), responses_rows()),
        xlsx_file("df_resultados_ranking_individual.xlsx", SCORE_HEADER, score_rows()),
        xlsx_file(
            "df_resultados_ranking_comparativo.xlsx",
            ("id", "modelo", "1º", "2º", "3º", "juiz"),
            ranking_rows(),
        ),
    ]


def imported(project, release, files, conflicts="") -> EvalRun:
    return run_import_results(
        project=project, release=release, name="Causal_QA.PT", files=files, enqueue=False, conflicts=conflicts
    )


def by_key(tables, key):
    return next(table for table in tables if table.key == key)


def test_the_published_results_go_in_as_one_run_and_give_figures_4_to_6(project, published):
    run = imported(project, published, published_files())
    tables = report_tables([run])
    classes = {item: causal_class for item, causal_class, _b in ITEMS}
    authors = {item: str(by) for item, _c, by in ITEMS}
    rows = score_rows()

    # Every score row is stored: none replaces another.
    assert sum(len(score.scores) for score in JudgeScore.objects.filter(run=run)) == len(rows)
    assert JudgeScore.objects.filter(run=run, response__isnull=True).count() == 6 * 2 + 2
    assert set(JudgeScore.objects.filter(run=run).values_list("judge", flat=True)) == {JUDGE, SECOND_JUDGE}
    assert run.judge_endpoint.name == JUDGE

    # Figure 4: every score of the reference answers (within each model's evaluation, by each judge), by author.
    reference = {
        (line["answer_by"], line["criterion"]): line for line in by_key(tables, "reference_scores").rows
    }
    for author in ("human", "model"):
        given = [
            row[4]
            for row in rows
            if row[2] == "referência" and row[3] == "aderência" and authors[row[0]] == author
        ]
        assert reference[(author, "adherence")]["n"] == len(given)
        assert reference[(author, "adherence")]["mean"] == pytest.approx(mean(given))

    # Figure 5: mean score per class × model · condition, every judge's scores counted.
    judge = {(line["class"], line["series"]): line for line in by_key(tables, "judge_scores").rows}
    for causal_class in set(classes.values()):
        for model in MODELS:
            for condition in CONDITIONS:
                given = [
                    row[4]
                    for row in rows
                    if classes[row[0]] == causal_class
                    and row[1] == model
                    and row[2] == condition
                    and row[3] == "aderência"
                ]
                line = judge[(causal_class, f"{model} · {condition}")]
                assert line["adherence"] == pytest.approx(mean(given))

    # Figure 6: the share of 1st / 2nd / 3rd places per source and model.
    places = {(line["model"], line["source"]): line for line in by_key(tables, "rankings").rows}
    for model in MODELS:
        for source, name in (("reference", "referência"), ("class-informed", "class-informed")):
            first = sum(1 for (_i, m), order in PLACES.items() if m == model and order[0] == name)
            assert places[(model, source)]["place_1"] == first
            assert places[(model, source)]["place_1_share"] == pytest.approx(first / len(ITEMS))

    # The import's report: rows read / stored / conflicting / refused, per file.
    counts = {entry["kind"]: entry for entry in run.imported["files"]}
    assert counts["scores"]["rows"] == counts["scores"]["stored"] == len(rows)
    assert (counts["scores"]["conflicting"], counts["scores"]["refused"]) == (0, 0)
    assert counts["rankings"]["stored"] == len(PLACES)


def conflicting_scores():
    rows = [
        (item, model, condition, "aderência", 4, "Boa.", JUDGE)
        for item, _c, _b in ITEMS
        for model in MODELS
        for condition in CONDITIONS
    ]
    rows.append(("cqa-1", "gemma-3-27b", "class-agnostic", "aderência", 2, "Fraca.", JUDGE))  # line 26
    rows.append(
        ("cqa-2", "gemma-3-27b", "class-agnostic", "aderência", 4, "Boa.", JUDGE)
    )  # line 27: same again
    return csv_file("notas.csv", SCORE_HEADER, rows)


def responses():
    return csv_file("respostas.csv", ("id", "modelo", "condicao", "resposta"), responses_rows())


def stored_adherence(run, item, model="gemma-3-27b", condition="class-agnostic"):
    return sorted(
        (score.judge, score.scores["adherence"])
        for score in JudgeScore.objects.filter(
            run=run,
            response__release_item__data__id=item,
            response__endpoint__name=model,
            response__condition=condition,
        )
    )


def test_a_colliding_score_is_listed_with_both_lines_and_nothing_is_imported(project, published):
    with pytest.raises(ResultsRejected) as excinfo:
        imported(project, published, [responses(), conflicting_scores()])

    conflicts = excinfo.value.conflicts
    assert [(c.file, c.line, c.other_file, c.other_line) for c in conflicts] == [
        ("notas.csv", 26, "notas.csv", 2)
    ]
    assert "a second score of cqa-1: gemma-3-27b · class-agnostic, adherence (gpt-5.1)" in str(excinfo.value)
    assert "notas.csv, row 2" in str(excinfo.value)
    assert EvalRun.objects.count() == 0


@pytest.mark.parametrize(
    "policy, expected",
    [("first", [("gpt-5.1", 4)]), ("last", [("gpt-5.1", 2)]), ("both", [("gpt-5.1", 4), ("gpt-5.1 (2)", 2)])],
)
def test_the_person_chooses_to_keep_the_first_the_last_or_both(project, published, policy, expected):
    run = imported(project, published, [responses(), conflicting_scores()], conflicts=policy)

    assert stored_adherence(run, "cqa-1") == expected
    assert stored_adherence(run, "cqa-2") == [("gpt-5.1", 4)]  # an exact repeat is stored once
    scores = next(entry for entry in run.imported["files"] if entry["kind"] == "scores")
    assert (scores["rows"], scores["conflicting"], scores["duplicates"], scores["refused"]) == (26, 1, 1, 0)
    assert scores["stored"] == {"first": 24, "last": 24, "both": 25}[policy]
    assert run.imported["policy"] == policy
    assert {(c["line"], c["other_line"], c["duplicate"]) for c in run.imported["conflicts"]} == {
        (26, 2, False),
        (27, 6, True),
    }


def test_a_second_response_to_the_same_item_is_a_conflict_kept_as_a_repetition_when_both_are_kept(
    project, published
):
    rows = responses_rows() + [("cqa-1", "gemma-3-27b", "class-agnostic", "Outra resposta.")]
    files = [csv_file("respostas.csv", ("id", "modelo", "condicao", "resposta"), rows)]
    with pytest.raises(ResultsRejected) as excinfo:
        imported(project, published, files)
    assert [(c.line, c.other_line) for c in excinfo.value.conflicts] == [(26, 2)]

    run = imported(project, published, files, conflicts="both")
    texts = EvalResponse.objects.filter(
        run=run, release_item__data__id="cqa-1", endpoint__name="gemma-3-27b", condition="class-agnostic"
    ).order_by("repetition")
    assert [(r.repetition, r.text) for r in texts][1] == (2, "Outra resposta.")


def test_two_judges_rankings_of_the_same_answers_are_both_kept(project, published):
    rankings = ranking_rows() + [
        ("cqa-1", "gemma-3-27b", "class-informed", "class-agnostic", "referência", SECOND_JUDGE)
    ]
    files = published_files()[:2] + [
        csv_file("rankings.csv", ("id", "modelo", "1º", "2º", "3º", "juiz"), rankings)
    ]
    run = imported(project, published, files)
    assert Ranking.objects.filter(run=run).count() == len(PLACES) + 1
    assert set(Ranking.objects.filter(run=run).values_list("judge", flat=True)) == {JUDGE, SECOND_JUDGE}


def test_the_results_import_takes_its_own_columns(project, published):
    files = [
        csv_file(
            "respostas.csv",
            ("pergunta_id", "qual_llm", "estrategia", "saida_do_modelo"),
            responses_rows(),
        )
    ]
    run = imported_with_columns(
        project,
        published,
        files,
        "item=pergunta_id,model=qual_llm,condition=estrategia,response=saida_do_modelo",
    )
    assert run.responses.count() == len(responses_rows())
    assert sorted(run.endpoints.values_list("name", flat=True)) == list(MODELS)

    with pytest.raises(
        ResultsRejected, match="unknown field 'causal_class'.*the fields are: item, question, model"
    ):
        imported_with_columns(project, published, files, "causal_class=estrategia")


def imported_with_columns(project, release, files, columns) -> EvalRun:
    return run_import_results(
        project=project, release=release, name="artigo", files=files, enqueue=False, columns=columns
    )


def test_the_command_takes_its_own_columns_and_a_conflict_choice_and_prints_what_it_used(
    project, published, tmp_path, capsys
):
    from django.core.management import call_command
    from django.core.management.base import CommandError

    answers = csv_file("saidas.csv", ("pergunta_id", "qual_llm", "estrategia", "saida"), responses_rows())
    scores = conflicting_scores()
    for result_file in (answers, scores):
        (tmp_path / result_file.name).write_bytes(result_file.data)
    arguments = [f"responses={tmp_path / answers.name}", f"scores={tmp_path / scores.name}"]
    options = {
        "project": project.slug,
        "release": published.tag,
        "name": "artigo",
        "columns": "item=pergunta_id,model=qual_llm,condition=estrategia,response=saida",
    }
    with pytest.raises(CommandError, match="(?s)notas.csv, row 26.*--conflicts first"):
        call_command("import_run_results", *arguments, **options, no_wait=True)

    call_command("import_run_results", *arguments, **options, no_wait=True, conflicts="both")
    said = capsys.readouterr().err
    assert "columns used: item=pergunta_id, model=qual_llm, condition=estrategia, response=saida" in said
    assert "notas.csv (scores): 26 rows read, 25 stored, 1 conflicting, 1 duplicates, 0 refused" in said
    # The columns named are remembered for the project's next import of results.
    project.refresh_from_db()
    assert project.import_mappings["results"]["columns"]["model"] == "qual_llm"


def test_no_wait_hands_the_run_to_a_worker_at_once(
    project, published, tmp_path, monkeypatch, django_capture_on_commit_callbacks
):
    from django.core.management import call_command

    from evaluation.runs import services

    sent = []
    monkeypatch.setattr(services, "run_enqueue", sent.append)
    answers = responses()
    (tmp_path / answers.name).write_bytes(answers.data)
    with django_capture_on_commit_callbacks(execute=True):
        call_command(
            "import_run_results",
            str(tmp_path / answers.name),
            project=project.slug,
            release=published.tag,
            name="artigo",
            no_wait=True,
        )
    assert sent == [EvalRun.objects.get().pk]  # on commit, not at the periodic sweep


def test_the_page_lists_colliding_rows_in_portuguese_and_keeps_both_when_asked(
    project, published, curator, client_for, django_capture_on_commit_callbacks
):
    from django.core.files.uploadedfile import SimpleUploadedFile

    from evaluation.models import ResultsImport
    from tests.evaluation.results_pages import post_results

    client = client_for(curator)
    answers, scores = responses(), conflicting_scores()

    def post(**extra):
        return post_results(
            client,
            project,
            {
                "release": published.pk,
                "split": "test",
                "name": "artigo",
                "responses": SimpleUploadedFile(answers.name, answers.data),
                "scores": SimpleUploadedFile(scores.name, scores.data),
                **extra,
            },
            django_capture_on_commit_callbacks,
            HTTP_ACCEPT_LANGUAGE="pt-br",
        )

    refused = post(columns="modelo=qual")
    assert refused.results_import.status == ResultsImport.Status.FAILED
    assert "--columns" not in refused.page
    assert "campo desconhecido" in refused.page

    refused = post(columns="model=modelo")
    assert refused.results_import.status == ResultsImport.Status.FAILED
    assert 'id="import-conflicts"' in refused.page
    assert 'id="back-to-mapping"' in refused.page and "Voltar ao mapeamento" in refused.page
    project.refresh_from_db()
    assert project.import_mappings["results"]["columns"] == {"model": "modelo"}  # kept after the failure
    assert "notas.csv, linha 26: uma segunda nota de cqa-1" in refused.page
    assert EvalRun.objects.count() == 0

    kept = post(conflicts="both")
    assert kept.results_import.status == ResultsImport.Status.DONE
    run = EvalRun.objects.get()
    assert stored_adherence(run, "cqa-1") == [("gpt-5.1", 4), ("gpt-5.1 (2)", 2)]
    assert 'id="import-counts"' in kept.page
    assert 'id="import-collisions"' in kept.page
    detail = client.get(
        reverse("evaluation:run_detail", args=[project.slug, run.pk]), HTTP_ACCEPT_LANGUAGE="pt-br"
    ).content.decode()
    assert 'id="import-counts"' in detail
    assert 'id="import-collisions"' in detail


def test_a_failed_question_import_keeps_its_mapping_and_leads_back_to_it(project, curator, client_for):
    from django.urls import reverse

    from annotation.importing import ImportRejected, questions_import
    from annotation.importing.mapping import QUESTIONS, remembered

    data = b"Texto,Tipo\nPor que chove?,nao-sei\n"
    with pytest.raises(ImportRejected) as excinfo:
        questions_import(
            project=project,
            data=data,
            filename="perguntas.csv",
            mapping={"columns": {"question": "Texto", "causal_class": "Tipo"}},
        )
    assert remembered(project, QUESTIONS)["columns"] == {"question": "Texto", "causal_class": "Tipo"}
    page = client_for(curator).get(
        reverse("annotation:import_detail", args=[project.slug, excinfo.value.batch.pk])
    )
    assert 'id="back-to-mapping"' in page.content.decode()


def test_the_results_mapping_step_proposes_roles_and_the_page_imports_with_the_roles_chosen(
    project, published, curator, client_for
):
    from django.core.files.uploadedfile import SimpleUploadedFile
    from django.urls import reverse

    client = client_for(curator)
    answers = csv_file("saidas.csv", ("id", "qual_llm", "estrategia", "resposta"), responses_rows())
    preview = client.post(
        reverse("evaluation:run_import_preview", args=[project.slug]),
        {"responses": SimpleUploadedFile(answers.name, answers.data), "columns": ""},
        HTTP_ACCEPT_LANGUAGE="pt-br",
    )
    html = preview.content.decode()
    assert preview.status_code == 200
    assert '<option value="id" selected>' in html  # item, from its name
    assert '<option value="resposta" selected>' in html  # response, from its name
    assert 'id="results-new-models"' in html and "gemma-3-27b" in html

    response = client.post(
        reverse("evaluation:run_import", args=[project.slug]),
        {
            "release": published.pk,
            "split": "test",
            "name": "artigo",
            "responses": SimpleUploadedFile(answers.name, answers.data),
            "role_model": "qual_llm",
            "role_condition": "estrategia",
        },
    )
    assert response.status_code == 302
    from evaluation.models import ResultsImport
    from evaluation.tasks import import_run_results_task

    import_run_results_task(ResultsImport.objects.latest("pk").pk)  # what the worker runs
    run = EvalRun.objects.get()
    assert sorted(run.endpoints.values_list("name", flat=True)) == list(MODELS)
    assert run.conditions == list(CONDITIONS)


def test_the_run_export_names_each_scores_judge_and_the_model_a_reference_was_scored_under(
    project, published
):
    import json as json_module

    from evaluation.runs.export import run_jsonl

    run = imported(project, published, published_files())
    lines = [json_module.loads(line) for line in b"".join(run_jsonl(run)).splitlines()]
    scores = [line for line in lines if line["type"] == "judge_score"]
    assert {line["judge"] for line in scores} == {JUDGE, SECOND_JUDGE}
    assert {line["under"] for line in scores if line["of"] == "reference"} == set(MODELS)
    assert {line["judge"] for line in lines if line["type"] == "ranking"} == {JUDGE}


def test_responses_published_one_column_per_condition_go_in_through_the_page_as_they_are(
    project, published, curator, client_for, django_capture_on_commit_callbacks
):
    """``df_metrics.xlsx`` as published: a row per question and model, the answer of each prompting condition in a
    column of its own, the reference and metric columns beside them."""
    from django.core.files.uploadedfile import SimpleUploadedFile

    from evaluation.models import ResultsImport
    from tests.evaluation.results_pages import post_results

    header = (
        "Question",
        "annot_pearl_class",
        "groundtruth",
        "respondido_pelo_llama",
        "source",
        "model",
        "resposta_class_agnostic",
        "resposta_class_informed",
        "bertscore_f1_agnostic",
    )
    rows = [
        (
            f"Por que acontece o caso {external_id}?",
            causal_class,
            f"Porque a causa do caso {external_id} age sobre o efeito.",
            by == Item.AnswerBy.MODEL,
            "reddit",
            model,
            f"Sem a classe, {model} diz que o caso {external_id} tem uma causa.",
            f"Com a classe, {model} diz que o caso {external_id} tem uma causa {causal_class}.",
            0.5,
        )
        for external_id, causal_class, by in ITEMS
        for model in MODELS
    ]
    metrics = xlsx_file("df_metrics.xlsx", header, rows)
    client = client_for(curator)
    preview = client.post(
        reverse("evaluation:run_import_preview", args=[project.slug]),
        {"responses": SimpleUploadedFile(metrics.name, metrics.data), "columns": ""},
    )
    assert preview.status_code == 200
    ignored = preview.content.decode().split("Columns ignored:")[1].split("</p>")[0]
    assert "groundtruth" in ignored and "resposta_class" not in ignored

    posted = post_results(
        client,
        project,
        {
            "release": published.pk,
            "split": "test",
            "name": "Causal_QA.PT",
            "responses": SimpleUploadedFile(metrics.name, metrics.data),
        },
        django_capture_on_commit_callbacks,
    )
    assert posted.results_import.status == ResultsImport.Status.DONE, posted.results_import.errors
    run = posted.results_import.run
    assert sorted(run.conditions) == ["class-agnostic", "class-informed"]
    assert run.responses.count() == len(ITEMS) * len(MODELS) * 2
    informed = run.responses.get(
        release_item__data__id=ITEMS[0][0], endpoint__name=MODELS[0], condition="class-informed"
    )
    assert informed.text.startswith(f"Com a classe, {MODELS[0]}")
    files = run.imported["files"]
    assert files[0]["columns"]["response:class-agnostic"] == "resposta_class_agnostic"
    assert "groundtruth" in files[0]["ignored"] and "resposta_class_agnostic" not in files[0]["ignored"]
