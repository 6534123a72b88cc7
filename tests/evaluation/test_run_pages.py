"""The run pages: started from the release page, followed live, read as a report, exported, compared."""

import json

import pytest
from django.urls import reverse

from evaluation.models import EvalRun
from evaluation.runs.services import run_create
from generation.models import PromptTemplate
from tests.evaluation.runs import mc_items, open_items, release_of, run_here
from tests.fake_llm import Reply

pytestmark = pytest.mark.django_db


def test_the_release_page_and_the_project_nav_lead_to_the_runs(project, client_for, curator, endpoint):
    open_items(project, 4)
    release = release_of(project)
    page = client_for(curator).get(reverse("evaluation:release_detail", args=[project.slug, release.version]))
    body = page.content.decode()
    runs_url = reverse("evaluation:run_list", args=[project.slug])
    assert f"{runs_url}?release={release.version}#new-run" in body
    assert f'href="{runs_url}"' in body  # the project navigation


def test_a_curator_starts_a_run_on_the_page_follows_it_and_reads_its_report(
    project, client_for, curator, endpoint, fake_llm
):
    mc_items(project, 8)
    release = release_of(project)
    client = client_for(curator)
    form = client.get(reverse("evaluation:run_list", args=[project.slug]), {"release": release.version})
    assert form.status_code == 200 and "chain-of-thought" in form.content.decode()
    response = client.post(
        reverse("evaluation:run_list", args=[project.slug]),
        {
            "release": release.pk,
            "split": "test",
            "endpoints": [endpoint.pk],
            "conditions": ["zero-shot"],
            "repetitions": 2,
            "temperature": 0,
            "max_tokens": 50,
            "seed": 13,
            "few_shot": 3,
            "level_key": "level",
            "type_key": "perspective",
            "task_key": "task",
            "variant_key": "variant",
            "differences": "",
        },
    )
    run = EvalRun.objects.get()
    detail = reverse("evaluation:run_detail", args=[project.slug, run.pk])
    assert response.status_code == 302 and response["Location"] == detail
    assert run.repetitions == 2 and run.decoding == {"temperature": 0.0, "max_tokens": 50}
    polled = client.get(detail, headers={"HX-Request": "true"})
    assert polled.status_code == 200 and "hx-trigger" in polled.content.decode()
    fake_llm.responder = lambda received: Reply.json({"answer": "A"})
    run_here(run)

    polled = client.get(detail, headers={"HX-Request": "true"})
    assert polled.status_code == 286 and polled["HX-Refresh"] == "true"
    page = client.get(detail).content.decode()
    assert "<svg" in page and ("Accuracy" in page or "Acurácia" in page)
    csv_url = reverse("evaluation:run_table_csv", args=[project.slug, run.pk, "accuracy"])
    assert csv_url in page
    csv_text = client.get(csv_url).content.decode()
    assert csv_text.splitlines()[0].startswith("series,n,correct,accuracy")
    export = client.get(reverse("evaluation:run_export", args=[project.slug, run.pk]))
    lines = [json.loads(line) for line in b"".join(export.streaming_content).decode().splitlines()]
    assert lines[0]["type"] == "run" and lines[0]["release_checksum"] == release.checksum
    responses = [line for line in lines if line["type"] == "response"]
    assert len(responses) == run.responses.count() and all(line["call"]["attempts"] for line in responses)


def test_the_run_form_takes_a_template_version_per_condition_and_names_a_wrong_one(
    project, client_for, curator, endpoint
):
    mc_items(project, 4)
    release = release_of(project)
    client = client_for(curator)
    url = reverse("evaluation:run_list", args=[project.slug])
    fields = {
        "release": release.pk,
        "split": "test",
        "endpoints": [endpoint.pk],
        "conditions": ["zero-shot"],
        "repetitions": 1,
        "seed": 13,
        "few_shot": 3,
        "level_key": "level",
        "type_key": "perspective",
        "task_key": "task",
        "variant_key": "variant",
    }

    for versions, error in (
        ("zero-shot 2", "CONDITION=N"),
        ("few-shot-ish = 1", "no such condition"),
        ("zero-shot = 9", "has no version 9"),
    ):
        page = client.post(url, {**fields, "template_versions": versions})
        assert page.status_code == 200 and error in page.content.decode(), versions
    assert not EvalRun.objects.exists()

    response = client.post(url, {**fields, "template_versions": "zero-shot = 1\n"})
    run = EvalRun.objects.get()
    assert response.status_code == 302
    assert PromptTemplate.objects.get(pk=run.templates["zero-shot"]).version == 1


def test_a_queued_run_is_cancelled_from_its_page(project, client_for, curator, endpoint):
    open_items(project, 4)
    run = run_create(project=project, release=release_of(project), endpoints=[endpoint], enqueue=False)
    client = client_for(curator)
    client.post(reverse("evaluation:run_cancel", args=[project.slug, run.pk]))
    run.refresh_from_db()
    assert run.status == EvalRun.Status.CANCELLED


def test_annotators_read_runs_but_cannot_start_or_cancel_them_and_outsiders_see_nothing(
    project, client_for, annotator, outsider, endpoint
):
    open_items(project, 4)
    run = run_create(project=project, release=release_of(project), endpoints=[endpoint], enqueue=False)
    client = client_for(annotator)
    assert client.get(reverse("evaluation:run_list", args=[project.slug])).status_code == 200
    assert client.get(reverse("evaluation:run_detail", args=[project.slug, run.pk])).status_code == 200
    assert client.post(reverse("evaluation:run_list", args=[project.slug]), {}).status_code == 403
    assert client.post(reverse("evaluation:run_cancel", args=[project.slug, run.pk])).status_code == 403
    client = client_for(outsider)
    assert client.get(reverse("evaluation:run_detail", args=[project.slug, run.pk])).status_code == 404


def test_the_comparison_page_shows_both_runs_and_downloads_its_tables(
    project, client_for, curator, endpoint, fake_llm
):
    mc_items(project, 6)
    release = release_of(project)
    runs = [
        run_create(
            project=project, release=release, endpoints=[endpoint], conditions=[condition], enqueue=False
        )
        for condition in ("zero-shot", "chain-of-thought")
    ]
    for run in runs:
        run_here(run)
    client = client_for(curator)
    url = reverse("evaluation:run_compare", args=[project.slug])
    page = client.get(url, {"run": [r.pk for r in runs]}).content.decode()
    for run, condition in zip(runs, ("zero-shot", "chain-of-thought")):
        assert f"#{run.pk} {condition}" in page
    csv_text = client.get(url, {"run": [r.pk for r in runs], "table": "accuracy"}).content.decode()
    assert len(csv_text.splitlines()) == 3


def test_the_jobs_of_a_run_open_on_the_generation_pages(project, client_for, curator, endpoint, fake_llm):
    open_items(project, 4)
    run = run_create(
        project=project,
        release=release_of(project),
        endpoints=[endpoint],
        judge_endpoint=endpoint,
        enqueue=False,
    )
    run_here(run)
    client = client_for(curator)
    page = client.get(reverse("evaluation:run_detail", args=[project.slug, run.pk])).content.decode()
    for job in run.jobs.all():
        url = reverse("generation:job_detail", args=[project.slug, job.pk])
        assert url in page and client.get(url).status_code == 200
    assert client.get(reverse("generation:project", args=[project.slug])).status_code == 200
