"""A platform judge scores and ranks the open answers of a run imported from elsewhere (lm-eval logs, a results
file), from the run's page, the API and `manage.py judge_run`: the run goes back to a worker, and its report then
has the judge's scores and rankings as a run started with that judge has. A run without open answers, or one that
already carries the judge's scores, is refused in the page's terms and the reader's language."""

import json

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from evaluation.models import EvalResponse, EvalRun, JudgeScore, Ranking, ReleaseItem
from evaluation.runs.imported import ResultFile, run_import_results
from evaluation.runs.report import report_tables
from evaluation.runs.services import RunInvalid, run_judge
from tests.evaluation.runs import open_items, release_of, run_here, second_endpoint
from tests.evaluation.test_run_import import ITEMS, published, responses_file, scores_file  # noqa: F401
from tests.factories import api_token_key

STAMP = "2026-01-05T10-20-30.123456"
TASK = "causal_qa_v1_class_agnostic"


def lm_eval_files(release, reply=lambda record: f"Porque {record['question'].lower()}") -> list[ResultFile]:
    """What `lm_eval --log_samples` writes for the release's open-answer task: results.json and samples."""
    results = {
        "results": {TASK: {"exact_match,none": 0.0}},
        "configs": {TASK: {"output_type": "generate_until", "metadata": {"condition": "class-agnostic"}}},
        "config": {"model": "local-chat-completions", "model_args": "model=llama-elsewhere,base_url=x"},
    }
    records = ReleaseItem.objects.filter(release=release, split="test").order_by("position")
    samples = [
        {"doc_id": n, "doc": {"id": data["id"], "question": data["question"]}, "resps": [[reply(data)]]}
        for n, data in enumerate(records.values_list("data", flat=True))
    ]
    return [
        ResultFile(f"results_{STAMP}.json", json.dumps(results).encode()),
        ResultFile(
            f"samples_{TASK}_{STAMP}.jsonl", "".join(json.dumps(s) + "\n" for s in samples).encode("utf-8")
        ),
    ]


def imported_run(project, release, files) -> EvalRun:
    run = run_import_results(project=project, release=release, name="lm-eval", files=files, enqueue=False)
    run_here(run)  # BERTScore, as the worker computes it for every imported run
    assert run.status == EvalRun.Status.SUCCEEDED, run.error
    return run


def judge_tables(run) -> dict:
    return {table.key: table for table in report_tables([run]) if table.key in ("judge_scores", "rankings")}


@pytest.mark.django_db
def test_a_curator_judges_the_answers_of_imported_lm_eval_logs_from_the_run_page(
    client, project, curator, endpoint, fake_llm
):
    open_items(project, 6)
    release = release_of(project)
    run = imported_run(project, release, lm_eval_files(release))
    responses = EvalResponse.objects.filter(run=run)
    items = release.items.filter(split="test").count()
    assert responses.count() == items >= 2
    assert not JudgeScore.objects.filter(run=run).exists()
    assert judge_tables(run) == {}
    client.force_login(curator)
    page = client.get(reverse("evaluation:run_detail", args=[project.slug, run.pk])).content.decode()
    assert "Judge these answers" in page

    posted = client.post(reverse("evaluation:run_judge", args=[project.slug, run.pk]), {"judge": endpoint.pk})

    assert posted.status_code == 302
    run.refresh_from_db()
    assert run.status == EvalRun.Status.QUEUED, "the run goes back to a worker"
    assert run.stage == EvalRun.Stage.JUDGING
    fake_llm.reset()
    run_here(run)
    assert run.status == EvalRun.Status.SUCCEEDED, run.error
    assert fake_llm.requests, "the judge was asked"
    assert all(r.body["model"] == endpoint.model for r in fake_llm.requests)
    scores = JudgeScore.objects.filter(run=run, error="")
    assert scores.filter(response__isnull=True).count() == items, "every reference answer is scored"
    assert scores.filter(response__isnull=False).count() == responses.count(), (
        "every imported answer is scored"
    )
    assert set(scores.first().scores) == {"adherence", "fluency", "coherence", "relevance"}
    rankings = Ranking.objects.filter(run=run, error="")
    assert rankings.count() == items, "one ranking per item of the one model"
    assert all(sorted(ranking.shown) == ["class-agnostic", "reference"] for ranking in rankings)
    assert set(responses.values_list("condition", flat=True)) == {"class-agnostic"}
    tables = judge_tables(run)
    assert set(tables) == {"judge_scores", "rankings"}, "the report has the judge's scores and rankings"
    assert {line["series"] for line in tables["judge_scores"].rows} == {"class-agnostic", "reference"}
    report = client.get(reverse("evaluation:run_detail", args=[project.slug, run.pk])).content.decode()
    assert str(tables["judge_scores"].title) in report
    assert str(tables["rankings"].title) in report
    assert "Judge these answers" in report, "another judge may still be asked"


@pytest.mark.django_db
def test_the_same_judge_twice_and_a_run_without_open_answers_are_refused_in_the_readers_language(
    client, project, curator, endpoint, fake_llm
):
    open_items(project, 4)
    release = release_of(project)
    judged = imported_run(project, release, lm_eval_files(release))
    run_judge(run=judged, judge_endpoint=endpoint, enqueue=False)
    run_here(judged)
    silent = imported_run(project, release, lm_eval_files(release, reply=lambda record: ""))
    assert not EvalResponse.objects.filter(run=silent, error="").exists()
    client.force_login(curator)

    again = client.post(
        reverse("evaluation:run_judge", args=[project.slug, judged.pk]),
        {"judge": endpoint.pk},
        follow=True,
        HTTP_ACCEPT_LANGUAGE="en",
    ).content.decode()
    empty = client.post(
        reverse("evaluation:run_judge", args=[project.slug, silent.pk]),
        {"judge": endpoint.pk},
        follow=True,
        HTTP_ACCEPT_LANGUAGE="pt-br",
    ).content.decode()

    assert f"run #{judged.pk} already carries judge scores from {endpoint.label}" in again
    assert f"a execução #{silent.pk} não tem respostas abertas para avaliar" in empty
    for run in (judged, silent):
        run.refresh_from_db()
        assert run.status == EvalRun.Status.SUCCEEDED, "a refused request leaves the run as it was"
    assert JudgeScore.objects.filter(run=silent).count() == 0
    with pytest.raises(RunInvalid) as refused:
        run_judge(run=judged, judge_endpoint=endpoint, enqueue=False)
    assert set(refused.value.errors) == {"judge_endpoint"}


@pytest.mark.django_db
def test_a_run_is_judged_through_the_api_and_a_second_judge_stands_beside_the_first(
    client, project, curator, annotator, endpoint, fake_llm
):
    open_items(project, 4)
    release = release_of(project)
    run = imported_run(project, release, lm_eval_files(release))
    other = second_endpoint(endpoint)
    url = f"/api/v1/projects/{project.slug}/runs/{run.pk}/judge/"
    client.defaults["HTTP_AUTHORIZATION"] = f"Token {api_token_key(annotator)}"
    assert client.post(url, {"judge": "fake"}, content_type="application/json").status_code == 403
    client.defaults["HTTP_AUTHORIZATION"] = f"Token {api_token_key(curator)}"

    first = client.post(url, {"judge": "fake"}, content_type="application/json")
    assert first.status_code == 202, first.json()
    assert first.json()["status"] == "queued"
    assert first["Location"] == first.json()["url"]
    run_here(run)
    second = client.post(url, {"judge": other.name}, content_type="application/json")
    assert second.status_code == 202, second.json()
    run_here(run)
    again = client.post(url, {"judge": other.name}, content_type="application/json")

    assert run.status == EvalRun.Status.SUCCEEDED, run.error
    assert again.status_code == 400
    assert "already carries judge scores" in again.json()["judge"][0]
    answered = EvalResponse.objects.filter(run=run).count()
    for name in ("", other.name):  # the first judge as a run's own; the second under its endpoint's name
        assert JudgeScore.objects.filter(run=run, judge=name, response__isnull=False).count() == answered
        assert Ranking.objects.filter(run=run, judge=name).count() == answered
    assert set(run.jobs.values_list("endpoint__name", flat=True)) == {"fake", other.name}
    detail = client.get(f"/api/v1/projects/{project.slug}/runs/{run.pk}/").json()
    assert "judge_scores" in {table["key"] for table in detail["tables"]}


@pytest.mark.django_db(transaction=True)
def test_the_command_judges_an_imported_results_file_beside_the_judge_it_brought(
    project, published, endpoint, fake_llm, capsys
):
    run = imported_run(project, published, [responses_file(), scores_file()])
    brought = JudgeScore.objects.filter(run=run, judge="gpt-5-mini").count()
    assert brought > 0

    call_command("judge_run", project.slug, str(run.pk), "--judge", "fake", "--here")

    run.refresh_from_db()
    assert run.status == EvalRun.Status.SUCCEEDED, run.error
    assert JudgeScore.objects.filter(run=run, judge="gpt-5-mini").count() == brought, "the file's scores stay"
    answered = EvalResponse.objects.filter(run=run, error="").exclude(text="").count()
    ours = JudgeScore.objects.filter(run=run, judge=endpoint.name, error="")
    assert ours.filter(response__isnull=False).count() == answered
    assert ours.filter(response__isnull=True).count() == len(ITEMS)
    assert Ranking.objects.filter(run=run, judge=endpoint.name, error="").count() == len(ITEMS) * 2
    out = capsys.readouterr().out
    assert f"run #{run.pk} succeeded" in out
    assert "Judge scores" in out
    with pytest.raises(CommandError, match="--judge: run #.* already carries judge scores from fake"):
        call_command("judge_run", project.slug, str(run.pk), "--judge", "fake", "--here")
    with pytest.raises(CommandError, match="has no run #999"):
        call_command("judge_run", project.slug, "999", "--judge", "fake")
