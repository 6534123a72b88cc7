"""The demo model: scripted, plausible replies in the prompt's language for every shipped prompt template,
registered as a site-wide endpoint, and marked as scripted wherever its text is shown."""

from pathlib import Path

import httpx
import jsonschema
import pytest
import yaml
from django.urls import reverse

from annotation.models import Item
from generation.demo_model import (
    DEMO_ENDPOINT_NAME,
    DEMO_MODEL_NAME,
    DemoModelServer,
    ScriptedWriter,
    is_portuguese,
    scripted_content,
)
from generation.llm.prompts import placeholders, render
from generation.models import GenerationJob, ModelEndpoint
from generation.prompts import template_dirs
from generation.services import job_create
from generation.services.demo import demo_endpoint_register, demo_endpoint_switch_off, is_scripted
from tests.factories import ItemFactory

from .conftest import run_now

TEMPLATES = sorted(path for folder in template_dirs() for path in folder.glob("*/*.yaml"))
VALUES = {
    "letters": "A, B, C, D, E",
    "labels": "A, B, C",
    "count": "3",
    "causal_class": "counterfactual",
    "options": "A) one\nB) two\nC) three\nD) four\nE) five",
}


def request_for(path: Path) -> tuple[dict, dict]:
    template = yaml.safe_load(path.read_text(encoding="utf-8"))
    names = placeholders(template["system"]) + placeholders(template["user"])
    variables = {name: VALUES.get(name, "x") for name in names}
    body = {
        "model": DEMO_MODEL_NAME,
        "messages": [
            {"role": "system", "content": render(template["system"], variables)},
            {"role": "user", "content": render(template["user"], variables)},
        ],
        "response_format": {"type": "json_schema", "json_schema": {"schema": template["output_schema"]}},
    }
    return body, template


@pytest.mark.parametrize("path", TEMPLATES, ids=lambda path: f"{path.parent.name}/{path.stem}")
def test_every_template_gets_a_valid_reply_in_its_language(path):
    import json

    body, template = request_for(path)
    value = json.loads(scripted_content(body))
    jsonschema.validate(value, template["output_schema"])
    assert ScriptedWriter(body).language == ("pt" if path.parent.name == "pt-BR" else "en")
    texts = [text for text in _strings(value) if len(text) > 60]
    if texts:
        assert is_portuguese(" ".join(texts)) == (path.parent.name == "pt-BR"), texts


def _strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for inner in value.values():
            yield from _strings(inner)
    elif isinstance(value, list):
        for inner in value:
            yield from _strings(inner)


def test_closed_answers_are_one_of_the_offered_letters_or_yes_no():
    import json

    for stem, allowed in (
        ("benchmark_answer.mc-zero-shot", set("ABCDE")),
        ("benchmark_answer.yes-no", {"yes", "no"}),
    ):
        body, _template = request_for(Path(f"evaluation/prompt_templates/en/{stem}.yaml"))
        assert json.loads(scripted_content(body))["answer"] in allowed
    body, _template = request_for(Path("evaluation/prompt_templates/en/judge_ranking.default.yaml"))
    assert sorted(json.loads(scripted_content(body))["ranking"]) == ["A", "B", "C"]


def test_a_batch_of_questions_has_distinct_questions_not_already_in_the_prompt():
    import json

    body, _template = request_for(Path("generation/prompt_templates/pt-BR/questions.default.yaml"))
    questions = [entry["question"] for entry in json.loads(scripted_content(body))["questions"]]
    assert len(questions) == 3 == len(set(questions))
    body["messages"][-1]["content"] += "\n" + "\n".join(questions)
    again = [entry["question"] for entry in json.loads(scripted_content(body))["questions"]]
    assert not set(again) & set(questions)


def test_the_server_answers_chat_embeddings_and_models_and_says_it_is_scripted():
    with DemoModelServer() as server:
        reply = httpx.post(
            f"{server.base_url}/chat/completions",
            json={"model": DEMO_MODEL_NAME, "messages": [{"role": "user", "content": "Why does ice melt?"}]},
        ).json()
        assert reply["system_fingerprint"] == "scripted" and reply["model"] == DEMO_MODEL_NAME
        assert reply["choices"][0]["message"]["content"]
        vectors = httpx.post(f"{server.base_url}/embeddings", json={"input": ["a b", "a c"]}).json()
        assert len(vectors["data"]) == 2
        assert httpx.get(f"{server.base_url}/models").json()["data"][0]["id"] == DEMO_MODEL_NAME


@pytest.mark.django_db
def test_registering_the_demo_model_makes_one_site_wide_endpoint_and_switching_it_off_hides_it():
    first = demo_endpoint_register("http://127.0.0.1:9999/v1")
    second = demo_endpoint_register("http://127.0.0.1:9998/v1")
    assert first.pk == second.pk and second.project is None and second.name == DEMO_ENDPOINT_NAME
    assert second.base_url == "http://127.0.0.1:9998/v1" and second.model == DEMO_MODEL_NAME
    demo_endpoint_switch_off()
    assert not ModelEndpoint.objects.get(pk=first.pk).is_active
    assert is_scripted(DEMO_MODEL_NAME) and not is_scripted("gpt-4o-mini")


@pytest.mark.django_db
def test_an_answer_job_on_the_demo_model_writes_answers_marked_as_scripted(
    project, curator, prompt_templates, client
):
    items = [
        ItemFactory(project=project, reference_answer="", answer_by="", status=Item.Status.PENDING, round=0)
        for _ in range(3)
    ]
    with DemoModelServer() as server:
        endpoint = demo_endpoint_register(server.base_url)
        job = job_create(
            project=project,
            kind="answer",
            endpoint=endpoint,
            item_ids=[item.pk for item in items],
            user=curator,
            enqueue=False,
        )
        run_now(job)
    assert job.status == GenerationJob.Status.SUCCEEDED and job.done == 3
    item = Item.objects.get(pk=items[0].pk)
    assert item.answer_provenance["model"] == DEMO_MODEL_NAME
    assert is_portuguese(item.reference_answer)
    client.force_login(curator)
    page = client.get(reverse("annotation:item_history", args=[project.slug, item.pk])).content.decode()
    assert "scripted demo (not a language model)" in page
