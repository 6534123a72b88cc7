"""Results from elsewhere: a benchmark run made from files of responses, judge scores and rankings, whose
report equals the same figures computed by hand, and every kind of bad row named with its file and row."""

import csv
import io
import json

import pytest

from annotation.models import Item
from core.background import import_stale_seconds
from evaluation.models import EvalRun
from evaluation.runs.imported import ResultFile, ResultsRejected, run_import_results
from evaluation.runs.report import report_tables
from evaluation.selectors import empty_responses
from tests.evaluation.runs import release_of
from tests.factories import ItemFactory

pytestmark = pytest.mark.django_db

MODELS = ("gpt-4o", "gemma-3-27b")
CONDITIONS = ("class-agnostic", "class-informed")
ITEMS = [  # id, class, who wrote the reference answer
    ("cqa-1", "associational", Item.AnswerBy.HUMAN),
    ("cqa-2", "interventional", Item.AnswerBy.MODEL),
    ("cqa-3", "counterfactual", Item.AnswerBy.HUMAN),
    ("cqa-4", "associational", Item.AnswerBy.MODEL),
]
# The judge's adherence score of each (item, model, condition): the figures below are computed from these.
ADHERENCE = {
    ("cqa-1", "gpt-4o", "class-agnostic"): 5,
    ("cqa-1", "gpt-4o", "class-informed"): 4,
    ("cqa-2", "gpt-4o", "class-agnostic"): 3,
    ("cqa-2", "gpt-4o", "class-informed"): 4,
    ("cqa-3", "gpt-4o", "class-agnostic"): 2,
    ("cqa-3", "gpt-4o", "class-informed"): 5,
    ("cqa-4", "gpt-4o", "class-agnostic"): 3,
    ("cqa-4", "gpt-4o", "class-informed"): 4,
    ("cqa-1", "gemma-3-27b", "class-agnostic"): 4,
    ("cqa-1", "gemma-3-27b", "class-informed"): 3,
    ("cqa-2", "gemma-3-27b", "class-agnostic"): 2,
    ("cqa-2", "gemma-3-27b", "class-informed"): 3,
    ("cqa-3", "gemma-3-27b", "class-agnostic"): 1,
    ("cqa-3", "gemma-3-27b", "class-informed"): 2,
    ("cqa-4", "gemma-3-27b", "class-agnostic"): 2,
    ("cqa-4", "gemma-3-27b", "class-informed"): 5,
}
REFERENCE_SCORES = {"cqa-1": 5, "cqa-2": 4, "cqa-3": 5, "cqa-4": 3}
# Rankings: (item, model) → order best first, and the order the answers were shown in.
RANKINGS = {
    ("cqa-1", "gpt-4o"): (
        "reference > class-agnostic > class-informed",
        "class-informed, reference, class-agnostic",
    ),
    ("cqa-2", "gpt-4o"): (
        "class-informed > reference > class-agnostic",
        "class-informed, class-agnostic, reference",
    ),
    ("cqa-3", "gpt-4o"): (
        "reference > class-informed > class-agnostic",
        "reference, class-agnostic, class-informed",
    ),
    ("cqa-4", "gpt-4o"): (
        "reference > class-informed > class-agnostic",
        "class-agnostic, reference, class-informed",
    ),
    ("cqa-1", "gemma-3-27b"): (
        "reference > class-agnostic > class-informed",
        "reference, class-informed, class-agnostic",
    ),
    ("cqa-2", "gemma-3-27b"): (
        "reference > class-informed > class-agnostic",
        "class-agnostic, reference, class-informed",
    ),
    ("cqa-3", "gemma-3-27b"): (
        "class-informed > reference > class-agnostic",
        "class-informed, class-agnostic, reference",
    ),
    ("cqa-4", "gemma-3-27b"): (
        "reference > class-informed > class-agnostic",
        "reference, class-agnostic, class-informed",
    ),
}


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


def table_bytes(header, rows) -> bytes:
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(header)
    writer.writerows(rows)
    return buffer.getvalue().encode("utf-8")


def responses_file(rows=None) -> ResultFile:
    rows = (
        rows
        if rows is not None
        else [
            (item, model, condition, f"Resposta de {model} ({condition}) ao caso {item}: a causa age.")
            for item, _c, _b in ITEMS
            for model in MODELS
            for condition in CONDITIONS
        ]
    )
    return ResultFile("respostas.csv", table_bytes(("id", "modelo", "condicao", "resposta"), rows))


def scores_file(extra=()) -> ResultFile:
    rows = [
        (item, f"{model} · {condition}", score, "Segue a pergunta.", "gpt-5-mini")
        for (item, model, condition), score in ADHERENCE.items()
    ]
    rows += [
        (item, "referência", score, "Resposta de referência.", "gpt-5-mini")
        for item, score in REFERENCE_SCORES.items()
    ]
    return ResultFile(
        "notas.csv", table_bytes(("id", "avaliado", "aderência", "justificativa", "juiz"), rows + list(extra))
    )


def rankings_file() -> ResultFile:
    rows = [
        (item, model, ranking, shown, "gpt-5-mini") for (item, model), (ranking, shown) in RANKINGS.items()
    ]
    return ResultFile("rankings.csv", table_bytes(("id", "modelo", "ranking", "shown", "juiz"), rows))


def imported(project, release, files) -> EvalRun:
    return run_import_results(
        project=project, release=release, name="Causal_QA.PT (artigo)", files=files, enqueue=False
    )


def by_key(tables, key):
    return next(table for table in tables if table.key == key)


def test_a_release_may_put_every_item_in_the_test_split(project, published):
    assert published.counts["splits"] == {"train": 0, "dev": 0, "test": 4}


def test_the_report_of_imported_results_equals_the_figures_computed_by_hand(project, published):
    run = imported(project, published, [responses_file(), scores_file(), rankings_file()])
    tables = report_tables([run])

    # Figure 5: mean judge score per class × model × condition.
    judge = {(line["class"], line["series"]): line for line in by_key(tables, "judge_scores").rows}
    assert judge[("associational", "gpt-4o · class-agnostic")]["adherence"] == (5 + 3) / 2
    assert judge[("associational", "gemma-3-27b · class-informed")]["adherence"] == (3 + 5) / 2
    assert judge[("counterfactual", "gemma-3-27b · class-agnostic")]["adherence"] == 1
    assert judge[("associational", "reference")]["n"] == 2

    # Figure 4: the reference answers' scores by who wrote them (people: cqa-1, cqa-3; models: cqa-2, cqa-4).
    reference = {line["answer_by"]: line for line in by_key(tables, "reference_scores").rows}
    assert reference["human"]["mean"] == (5 + 5) / 2
    assert reference["model"]["mean"] == (4 + 3) / 2
    assert (reference["human"]["score_5"], reference["model"]["score_3"]) == (2, 1)

    # Figure 6: share of 1st / 2nd / 3rd places per source and model.
    places = {(line["model"], line["source"]): line for line in by_key(tables, "rankings").rows}
    assert places[("gpt-4o", "reference")]["place_1"] == 3
    assert places[("gpt-4o", "reference")]["place_1_share"] == 3 / 4
    assert places[("gemma-3-27b", "class-agnostic")]["place_3"] == 3
    assert places[("gemma-3-27b", "class-informed")]["place_1_share"] == 1 / 4

    # Position bias: how often the answer shown first was ranked best (gpt-4o: cqa-1 no, cqa-2 yes, cqa-3 yes,
    # cqa-4 no).
    bias = {(line["model"], line["position"]): line for line in by_key(tables, "position_bias").rows}
    assert bias[("gpt-4o", 1)]["won"] == 2
    assert bias[("gpt-4o", 2)]["won"] == 2
    assert bias[("gemma-3-27b", 1)]["won"] == 3


def test_an_imported_run_is_marked_with_its_files_checksums_and_models(project, published):
    files = [responses_file(), scores_file(), rankings_file()]
    run = imported(project, published, files)

    assert [entry["kind"] for entry in run.imported["files"]] == ["responses", "scores", "rankings"]
    assert run.imported["files"][0]["sha256"] == files[0].sha256
    assert run.imported["files"][0]["rows"] == 16
    assert sorted(run.endpoints.values_list("name", flat=True)) == ["gemma-3-27b", "gpt-4o"]
    assert run.judge_endpoint.name == "gpt-5-mini"
    assert not run.judge_endpoint.is_active  # it stands for the model; it is never called
    assert run.conditions == ["class-agnostic", "class-informed"]
    assert run.responses.count() == 16


def test_unmatched_items_unknown_models_and_out_of_range_scores_are_listed_and_nothing_is_imported(
    project, published
):
    responses = responses_file(
        [
            ("cqa-1", "gpt-4o", "class-agnostic", "Sim."),
            ("cqa-99", "gpt-4o", "class-agnostic", "Não."),
            ("Por que acontece o caso cqa-2?", "gpt-4o", "class-agnostic", "Talvez."),
            ("cqa-1", "gpt-4o", "class-agnostic", "De novo."),
        ]
    )
    scores = ResultFile(
        "notas.csv",
        table_bytes(
            ("id", "avaliado", "aderência"),
            [
                ("cqa-1", "gpt-4o · class-agnostic", 7),
                ("cqa-1", "llama-3 · class-agnostic", 4),
                ("cqa-1", "gpt-4o · few-shot", 4),
                ("cqa-2", "gpt-4o · class-agnostic", "ótimo"),
            ],
        ),
    )
    with pytest.raises(ResultsRejected) as excinfo:
        imported(project, published, [responses, scores])
    problems = [(error.file, error.line, error.field) for error in excinfo.value.errors]
    assert ("respostas.csv", 3, "item") in problems  # cqa-99: no such item
    assert ("respostas.csv", 5, "") in problems  # a second response of the same series to cqa-1
    assert ("notas.csv", 2, "adherence") in problems  # 7 is out of range
    assert ("notas.csv", 3, "model") in problems  # llama-3 answered nothing
    assert ("notas.csv", 4, "condition") in problems  # few-shot is no condition of the responses
    assert ("notas.csv", 5, "adherence") in problems  # not a number
    assert "matches no item" in str(excinfo.value)
    assert EvalRun.objects.count() == 0


def test_a_file_whose_kind_cannot_be_told_is_named(project, published):
    unknown = ResultFile("outro.csv", table_bytes(("id", "qualquer"), [("cqa-1", "x")]))
    with pytest.raises(ResultsRejected, match="outro.csv.*cannot tell the kind"):
        imported(project, published, [responses_file(), unknown])


def test_a_run_with_more_than_a_tenth_of_empty_answers_says_so_at_the_top_of_its_report(
    project, published, curator, client_for
):
    from django.urls import reverse

    rows = [
        (item, "gpt-4o", "class-agnostic", "" if item in ("cqa-1", "cqa-2") else "Porque a causa age.")
        for item, _c, _b in ITEMS
    ]
    run = imported(project, published, [responses_file(rows)])
    assert (empty_responses(run).empty, empty_responses(run).total) == (2, 4)

    page = (
        client_for(curator)
        .get(reverse("evaluation:run_detail", args=[project.slug, run.pk]))
        .content.decode()
    )
    assert 'id="empty-responses"' in page
    assert page.index('id="empty-responses"') < page.index('id="run-status"')


def test_the_command_imports_results_and_computes_bertscore(project, published, tmp_path, capsys):
    from django.core.management import call_command

    pytest.importorskip("sentence_transformers")
    responses, scores = responses_file(), scores_file()
    (tmp_path / responses.name).write_bytes(responses.data)
    (tmp_path / scores.name).write_bytes(scores.data)
    call_command(
        "import_run_results",
        str(tmp_path / responses.name),
        f"scores={tmp_path / scores.name}",
        project=project.slug,
        release=published.tag,
        name="artigo",
        json=True,
    )

    report = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert report["status"] == "succeeded", report["notes"]
    bertscore = next(table for table in report["tables"] if table["key"] == "bertscore")
    assert len(bertscore["rows"]) == 3 * 4  # 3 classes × 2 models × 2 conditions
    assert all(0 < row["bertscore_f1"] <= 1 for row in bertscore["rows"])


def test_the_runs_page_imports_results_and_lists_unmatched_rows(
    project, published, curator, client_for, django_capture_on_commit_callbacks
):
    """The page stores the files and queues the import; a worker reads them; the import's page shows its
    status while it waits, then every unmatched row (nothing imported) or the run with its report."""
    from django.core.files.uploadedfile import SimpleUploadedFile
    from django.urls import reverse

    from evaluation.models import ResultsImport
    from tests.evaluation.results_pages import post_results

    client = client_for(curator)
    page = client.get(reverse("evaluation:run_list", args=[project.slug])).content.decode()
    assert 'id="import-results"' in page

    bad = responses_file(
        [("cqa-1", "gpt-4o", "class-agnostic", "Sim."), ("cqa-77", "gpt-4o", "class-agnostic", "?")]
    )
    form = {"release": published.pk, "split": "test", "name": "artigo"}
    refused = post_results(
        client,
        project,
        {**form, "responses": SimpleUploadedFile(bad.name, bad.data)},
        django_capture_on_commit_callbacks,
    )
    assert refused.response.status_code == 302
    assert refused.waiting.status_code == 200, "the import's page polls while the import waits for a worker"
    assert 'hx-trigger="every 1s"' in refused.waiting.content.decode()
    assert "Queued" in refused.waiting.content.decode()
    assert refused.results_import.status == ResultsImport.Status.FAILED
    assert 'id="import-problems"' in refused.page
    assert "Nothing was imported." in refused.page
    assert "respostas.csv, row 3, item" in refused.page
    assert [(e["file"], e["line"], e["field"]) for e in refused.results_import.errors] == [
        ("respostas.csv", 3, "item")
    ]
    assert refused.results_import.files == [], "the files of an import that is over are not kept"
    assert EvalRun.objects.count() == 0
    finished = client.get(refused.response["Location"], headers={"HX-Request": "true"})
    assert finished.status_code == 286, "polling stops once the import is over"

    good, scores = responses_file(), scores_file()
    taken = post_results(
        client,
        project,
        {
            **form,
            "responses": SimpleUploadedFile(good.name, good.data),
            "scores": SimpleUploadedFile(scores.name, scores.data),
        },
        django_capture_on_commit_callbacks,
    )
    assert taken.results_import.status == ResultsImport.Status.DONE
    assert len(taken.callbacks) == 1  # BERTScore is left to a worker
    run = EvalRun.objects.get()
    assert taken.results_import.run == run
    assert 'id="import-counts"' in taken.page, "the import's report: rows read, stored, conflicting, refused"
    assert scores.sha256 in taken.page
    assert [
        (f["name"], f["rows"], f["stored"], f["conflicting"], f["refused"])
        for f in taken.results_import.report["files"]
    ] == [
        (good.name, 16, 16, 0, 0),
        (scores.name, 20, 20, 0, 0),
    ]
    detail = client.get(reverse("evaluation:run_detail", args=[project.slug, run.pk])).content.decode()
    assert 'id="run-provenance"' in detail
    assert scores.sha256 in detail
    assert run.judge_scores.count() == 16 + 4
    listed = client.get(reverse("evaluation:run_list", args=[project.slug])).content.decode()
    for results_import in (refused.results_import, taken.results_import):
        link = reverse("evaluation:results_import_detail", args=[project.slug, results_import.pk])
        assert link in listed, "the runs page lists the imports of results, each leading to its page"


def test_a_results_import_whose_worker_died_is_queued_again_then_given_up_with_a_reason(
    project, published, monkeypatch, settings
):
    from datetime import timedelta

    from django.core.files.base import ContentFile
    from django.core.files.storage import default_storage
    from django.utils import timezone

    from evaluation.models import ResultsImport
    from evaluation.runs import results_import as service

    sent = []
    monkeypatch.setattr(service, "results_import_enqueue", sent.append)
    good = responses_file()
    started = service.results_import_start(
        project=project,
        release=published,
        name="artigo",
        files=[service.ResultUpload(kind="", file=ContentFile(good.data), name=good.name)],
        split="test",
        enqueue=False,
    )
    path = started.files[0]["path"]
    assert default_storage.exists(path)
    long_ago = timezone.now() - timedelta(seconds=import_stale_seconds() + 60)
    ResultsImport.objects.filter(pk=started.pk).update(status="running", owner="dead", heartbeat_at=long_ago)
    assert service.results_imports_resume_stale() == [started.pk]
    assert sent == [started.pk]
    started.refresh_from_db()
    assert (started.status, started.resumed) == ("queued", 1)

    ResultsImport.objects.filter(pk=started.pk).update(
        status="running", heartbeat_at=long_ago, resumed=service.MAX_RESUMES
    )
    assert service.results_imports_resume_stale() == [started.pk]
    started.refresh_from_db()
    assert started.status == "failed"
    assert "without finishing" in started.errors[0]["reason"]
    assert not default_storage.exists(path), "the files of an import given up on are not kept"
    assert EvalRun.objects.count() == 0
