"""`python manage.py generate …`: the same jobs from the terminal, with a progress bar."""

import json

import pytest
from django.core.management import CommandError, call_command

from annotation.models import Item
from generation.models import GenerationJob
from tests.factories import ItemFactory
from tests.fake_llm import Reply
from topics.models import Topic

pytestmark = pytest.mark.django_db(transaction=True)


def waiting_items(project, n):
    return [
        ItemFactory(project=project, status=Item.Status.PENDING, round=0, reference_answer="")
        for _ in range(n)
    ]


def test_answers_for_every_waiting_item_run_here_and_report_as_json(project, endpoint, fake_llm, capsys):
    items = waiting_items(project, 4)

    call_command(
        "generate",
        "answers",
        "--project",
        project.slug,
        "--model",
        "fake",
        "--all-waiting",
        "--here",
        "--json",
    )

    report = json.loads(capsys.readouterr().out)
    assert (report["status"], report["done"], report["failed"], report["total"]) == ("succeeded", 4, 0, 4)
    assert Item.objects.filter(pk__in=[i.pk for i in items], status=Item.Status.IN_REVIEW).count() == 4


def test_questions_in_a_topic_with_a_progress_bar(project, endpoint, fake_llm, capsys):
    Topic.objects.create(project=project, label="Educação e carreira")

    call_command(
        "generate",
        "questions",
        "--project",
        project.slug,
        "--model",
        "fake-model-1",
        "--class",
        "counterfactual",
        "--count",
        "5",
        "--batch-size",
        "2",
        "--topic",
        "Educação e carreira",
        "--answer-model",
        "fake",
        "--here",
    )

    captured = capsys.readouterr()
    assert "job #" in captured.err and "call" in captured.err  # the bar
    assert "succeeded: 8 done, 0 failed" in captured.out
    assert Item.objects.filter(origin="generated", topic__label="Educação e carreira").count() == 5


def test_a_failing_job_makes_the_command_fail_with_the_reason(project, endpoint, fake_llm):
    [item] = waiting_items(project, 1)
    fake_llm.script(Reply.model_not_found("fake-model-1"))
    with pytest.raises(CommandError, match="failed: 404"):
        call_command("generate", "answers", "--project", project.slug, "--items", str(item.pk), "--here")


def test_without_here_the_job_is_left_to_the_workers(
    project, endpoint, capsys, django_capture_on_commit_callbacks
):
    [item] = waiting_items(project, 1)
    call_command("generate", "answers", "--project", project.slug, "--items", str(item.pk), "--no-wait")
    job = GenerationJob.objects.get()
    assert capsys.readouterr().out.strip() == str(job.pk) and job.status == GenerationJob.Status.QUEUED


@pytest.mark.parametrize(
    "arguments, message",
    [
        (["answers", "--project", "nope"], "No project with slug 'nope'"),
        (["answers", "--project", "causal-qa", "--model", "gpt-9"], "no active endpoint 'gpt-9'"),
        (["answers", "--project", "causal-qa", "--items", "1,x"], "not an item id: x"),
        (["answers", "--project", "causal-qa", "--items", "999999"], "item_ids: not in this project: 999999"),
        (["questions", "--project", "causal-qa", "--count", "3", "--class", "causal"], "causal_class"),
        (
            [
                "questions",
                "--project",
                "causal-qa",
                "--count",
                "3",
                "--class",
                "counterfactual",
                "--topic",
                "Nada",
            ],
            "no topic 'Nada'",
        ),
    ],
)
def test_mistakes_are_explained(project, endpoint, arguments, message):
    with pytest.raises(CommandError, match=message):
        call_command("generate", *arguments)


def test_with_no_endpoint_the_command_says_how_to_configure_one(project, settings, prompt_templates):
    settings.LLM_BASE_URL = settings.LLM_MODEL = ""
    with pytest.raises(CommandError, match="none; set LLM_BASE_URL and LLM_MODEL"):
        call_command("generate", "distractors", "--project", project.slug)
