"""Prompts that cannot silently produce nothing: a template's schema must declare the key its job reads, and
outputs that parse but are empty fail with the reason."""

import pytest
import yaml

from annotation.models import Item
from generation.models import GenerationJob, LLMCall
from generation.services import job_create
from generation.services.templates import (
    TemplateProblem,
    empty_output,
    prompt_template_add_version,
    read_template_files,
)
from tests.factories import ItemFactory
from tests.fake_llm import Reply

from .conftest import run_now

pytestmark = pytest.mark.django_db

# A benchmark-answer template as a user adapted it: its output key is "resposta", not "answer".
RESPOSTA_SCHEMA = {
    "type": "object",
    "properties": {"resposta": {"type": "string"}},
    "required": ["resposta"],
    "additionalProperties": False,
}


def test_saving_a_template_whose_schema_lacks_the_key_its_kind_reads_is_refused_naming_the_key():
    with pytest.raises(TemplateProblem) as excinfo:
        prompt_template_add_version(
            kind="benchmark_answer",
            name="class-agnostic",
            language="pt-BR",
            system="",
            user="Responda: {question}",
            output_schema=RESPOSTA_SCHEMA,
        )
    message = str(excinfo.value)
    assert "must declare the key(s) 'answer'" in message
    assert "the schema's properties: resposta" in message


def test_a_key_declared_but_not_required_is_refused_too():
    schema = {"type": "object", "properties": {"answer": {"type": "string"}}}
    with pytest.raises(TemplateProblem, match="'answer'"):
        prompt_template_add_version(
            kind="answer",
            name="class-agnostic",
            language="pt-BR",
            system="",
            user="Responda: {question}",
            output_schema=schema,
        )


def test_loading_a_template_file_with_the_wrong_key_is_refused_naming_the_file(tmp_path):
    folder = tmp_path / "benchmark_answer"
    folder.mkdir()
    (folder / "resposta.yaml").write_text(
        yaml.safe_dump(
            {
                "kind": "benchmark_answer",
                "name": "class-agnostic",
                "language": "pt-BR",
                "user": "Responda: {question}",
                "output_schema": RESPOSTA_SCHEMA,
            },
            allow_unicode=True,
        ),
        encoding="utf-8",
    )
    with pytest.raises(TemplateProblem) as excinfo:
        read_template_files(tmp_path)
    assert "benchmark_answer/resposta.yaml" in str(excinfo.value)
    assert "'answer'" in str(excinfo.value)


def test_every_shipped_template_declares_the_keys_its_kind_reads():
    assert read_template_files()


@pytest.mark.parametrize(
    "parsed, empty",
    [
        ({"answer": "Porque a geada reduz a oferta."}, False),
        ({"answer": "   "}, True),
        ({"answer": None}, True),
        ({"resposta": "Porque sim."}, True),
        ({}, True),
    ],
)
def test_an_output_is_empty_when_the_key_read_is_missing_or_blank(parsed, empty):
    assert bool(empty_output("benchmark_answer", parsed)) is empty


def test_an_answer_job_fails_the_calls_whose_output_parses_but_is_empty(project, endpoint, fake_llm, curator):
    items = [
        ItemFactory(project=project, reference_answer="", answer_by="", status=Item.Status.PENDING, round=0)
        for _ in range(3)
    ]
    fake_llm.script(
        Reply.json({"answer": "A geada destrói a safra e o preço sobe."}),
        Reply.json({"answer": "\n"}),
        Reply.json({"answer": "  "}),
    )
    job = job_create(
        project=project,
        kind="answer",
        endpoint=endpoint,
        item_ids=[i.pk for i in items],
        user=curator,
        enqueue=False,
    )

    run_now(job)

    job.refresh_from_db()
    assert (job.done, job.failed) == (1, 2)
    failed = LLMCall.objects.filter(job=job, status=LLMCall.Status.FAILED)
    assert {call.error for call in failed} == {"the output parsed but 'answer' is missing or empty"}
    assert Item.objects.filter(pk__in=[i.pk for i in items], reference_answer="").count() == 2
    assert job.status == GenerationJob.Status.SUCCEEDED
