"""Runs through the REST API (start, read, cancel, export) and `python manage.py evaluate`."""

import json

import pytest
from django.core.management import CommandError, call_command

from evaluation.models import EvalRun
from tests.evaluation.runs import mc_items, open_items, release_of, run_here
from tests.factories import api_token_key
from tests.fake_llm import Reply


def api(client, user):
    client.defaults["HTTP_AUTHORIZATION"] = f"Token {api_token_key(user)}"
    return client


@pytest.mark.django_db
def test_a_run_is_started_read_and_cancelled_through_the_api(
    client, project, curator, annotator, endpoint, fake_llm
):
    open_items(project, 4)
    release_of(project)
    url = f"/api/v1/projects/{project.slug}/runs/"
    created = api(client, curator).post(
        url,
        {
            "release": "v1",
            "models": ["fake"],
            "judge": "fake",
            "repetitions": 2,
            "decoding": {"temperature": 0.2},
        },
        content_type="application/json",
    )
    assert created.status_code == 202, created.json()
    body = created.json()
    assert body["status"] == "queued" and body["conditions"] == ["class-agnostic", "class-informed"]
    assert created["Location"] == body["url"] and body["judge"] == "fake · fake-model-1"
    run = EvalRun.objects.get(pk=body["id"])
    run_here(run)

    detail = api(client, annotator).get(f"{url}{run.pk}/").json()
    assert detail["status"] == "succeeded" and detail["progress"]["done"] == detail["progress"]["calls"] > 0
    assert {"judge_scores", "rankings"} <= {table["key"] for table in detail["tables"]}
    export = client.get(detail["export_url"])
    lines = [json.loads(line) for line in b"".join(export.streaming_content).decode().splitlines()]
    assert {line["type"] for line in lines} == {"run", "response", "judge_score", "ranking"}
    assert all(line["call"]["request"]["messages"] for line in lines if line["type"] == "ranking")
    listed = client.get(url).json()["results"]
    assert [entry["id"] for entry in listed] == [run.pk]
    # cancelling a finished run changes nothing; annotators may not cancel
    assert client.post(f"{url}{run.pk}/cancel/").status_code == 403
    assert api(client, curator).post(f"{url}{run.pk}/cancel/").json()["status"] == "succeeded"


@pytest.mark.django_db
def test_the_api_names_what_is_wrong_with_a_run_request(client, project, curator, endpoint):
    mc_items(project, 4)
    release_of(project)
    url = f"/api/v1/projects/{project.slug}/runs/"
    client = api(client, curator)
    unknown_model = client.post(url, {"release": "v1", "models": ["gpt-9"]}, content_type="application/json")
    assert unknown_model.status_code == 400 and "gpt-9" in unknown_model.json()["models"][0]
    wrong = client.post(
        url,
        {"release": "v1", "models": ["fake"], "conditions": ["class-informed"], "judge": "fake"},
        content_type="application/json",
    ).json()
    assert "zero-shot, few-shot, chain-of-thought" in wrong["conditions"][0] and "judge_endpoint" in wrong
    assert (
        client.post(url, {"release": "v9", "models": ["fake"]}, content_type="application/json").status_code
        == 404
    )
    no_version = client.post(
        url,
        {"release": "v1", "models": ["fake"], "template_versions": {"zero-shot": 9}},
        content_type="application/json",
    ).json()
    assert "'mc-zero-shot' has no version 9" in no_version["template_versions"][0]
    assert not EvalRun.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_the_evaluate_command_runs_here_and_prints_the_report_as_json(project, endpoint, fake_llm, capsys):
    mc_items(project, 6)
    release_of(project)
    fake_llm.responder = lambda received: Reply.json({"answer": "A"})

    call_command(
        "evaluate",
        project.slug,
        "--model",
        "fake",
        "--condition",
        "zero-shot",
        "--repetitions",
        "3",
        "--temperature",
        "0",
        "--metadata-key",
        "level=level",
        "--here",
        "--json",
    )

    report = json.loads(capsys.readouterr().out)
    assert report["status"] == "succeeded" and report["progress"]["failed"] == 0
    [accuracy] = [table for table in report["tables"] if table["key"] == "accuracy"]
    [row] = accuracy["rows"]
    run = EvalRun.objects.get()
    assert row["n"] == 3 * run.release.items.filter(split="test").count()
    assert all(r.body["temperature"] == 0 for r in fake_llm.requests)


@pytest.mark.django_db
def test_the_evaluate_command_says_what_is_wrong(project, endpoint):
    open_items(project, 4)
    with pytest.raises(CommandError, match="no ready release"):
        call_command("evaluate", project.slug, "--model", "fake")
    release_of(project)
    with pytest.raises(CommandError, match="--model: no active endpoint 'nope'"):
        call_command("evaluate", project.slug, "--model", "nope")
    with pytest.raises(CommandError, match="conditions: unknown for open answers: zero-shot"):
        call_command("evaluate", project.slug, "--model", "fake", "--condition", "zero-shot")
