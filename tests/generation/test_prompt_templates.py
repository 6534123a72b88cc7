"""The shipped prompt templates: loaded at the end of `migrate` and by the command, versioned, immutable, usable."""

import shutil

import pytest
import yaml
from django.contrib.admin.sites import site
from django.core.management import call_command
from django.urls import reverse

from generation.kinds import call_kind
from generation.llm import render, validation_error
from generation.llm.prompts import placeholders
from generation.models import PromptTemplate
from generation.prompts import template_dirs
from generation.services.templates import (
    TEMPLATE_DIR,
    TemplateProblem,
    prompt_templates_load,
    template_check,
    template_latest,
)
from tests.fake_llm import example_for_schema

pytestmark = pytest.mark.django_db
KINDS = [
    "questions",
    "answer",
    "distractors",
    "revision",
    "judge_score",
    "judge_ranking",
    "decontamination",
    "meter_question",
]
KINDS += ["causalbench_expand", "causalbench_scenario", "causalbench_check", "checklist"]
KINDS += ["benchmark_answer"]
SHIPPED = sum(len(list(folder.glob("*/*.yaml"))) for folder in template_dirs())  # one version of each file


def test_migrate_loaded_every_default_template_in_portuguese_and_english():
    shipped = set(PromptTemplate.objects.values_list("kind", "name", "language"))
    for language in ("pt-BR", "en"):
        for kind in KINDS:
            assert any(k == kind and lang == language for k, _name, lang in shipped), (kind, language)
        assert (("answer", "class-agnostic", language) in shipped) and (
            ("answer", "class-informed", language) in shipped
        )
    assert PromptTemplate.objects.count() == SHIPPED  # one per file: kinds added later ship their own
    assert set(PromptTemplate.objects.values_list("version", flat=True)) == {1}


def test_loading_again_changes_nothing(capsys):
    call_command("load_prompt_templates")
    assert f"0 new version(s), {SHIPPED} unchanged" in capsys.readouterr().out
    assert PromptTemplate.objects.count() == SHIPPED  # one per file: kinds added later ship their own


def test_a_changed_file_becomes_a_new_version_and_the_old_one_stays(tmp_path):
    directory = tmp_path / "prompts"
    shutil.copytree(TEMPLATE_DIR, directory)
    path = directory / "pt-BR" / "revision.default.yaml"
    spec = yaml.safe_load(path.read_text())
    before = template_latest(kind="revision", language="pt-BR")
    spec["user"] = spec["user"].replace("Reescreva a resposta", "Reescreva com cuidado a resposta")
    path.write_text(yaml.safe_dump(spec, allow_unicode=True))

    report = prompt_templates_load(directory=directory)

    [new] = report.created
    assert (new.kind, new.language, new.version) == ("revision", "pt-BR", 2)
    assert template_latest(kind="revision", language="pt-BR") == new
    before.refresh_from_db()
    assert before.version == 1 and "Reescreva a resposta" in before.user


def test_editing_a_template_in_the_admin_stores_a_new_version(admin_client):
    template = template_latest(kind="answer", language="en", name="class-agnostic")
    url = reverse("admin:generation_prompttemplate_change", args=[template.pk])
    response = admin_client.post(
        url,
        {
            "system": template.system + " Be brief.",
            "user": template.user,
            "output_schema": '{"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}',
            "notes": "shorter answers",
        },
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    template.refresh_from_db()
    assert not template.system.endswith("Be brief.")
    latest = template_latest(kind="answer", language="en", name="class-agnostic")
    assert latest.version == 2 and latest.system.endswith("Be brief.") and latest.notes == "shorter answers"
    assert site.is_registered(PromptTemplate)


def test_an_unknown_placeholder_or_a_broken_schema_is_refused():
    with pytest.raises(TemplateProblem, match="unknown placeholder.*topicc"):
        template_check(kind="questions", system="", user="{{ topicc }}", output_schema={"type": "object"})
    with pytest.raises(TemplateProblem, match="not a valid JSON schema"):
        template_check(kind="answer", system="", user="{{ question }}", output_schema={"type": "objeto"})


def test_portuguese_projects_get_portuguese_templates_and_others_fall_back_to_english():
    assert template_latest(kind="distractors", language="pt-BR").language == "pt-BR"
    assert template_latest(kind="distractors", language="pt").language == "pt-BR"
    assert template_latest(kind="distractors", language="de").language == "en"


def _variables(kind: str) -> dict:
    values = {
        "count": 3,
        "causal_class": "counterfactual",
        "class_definition": "contrafactual — …",
        "class_definitions": "- associativa — …\n- intervencional — …",
        "topic": "Educação e carreira",
        "topic_words": "universidade, emprego",
        "examples": "- Vale a pena fazer mestrado?",
        "language": "pt-BR",
        "question": "Se eu tivesse feito engenharia, estaria empregado?",
        "context": "",
        "class_description": "…",
        "question_type": "counterfactual",
        "correct_option": "Provavelmente sim.",
        "answer": "Sim.",
        "feedback": "- Reviewer 1 (needs revision): falta justificar",
        "reference": "Sim, porque…",
        "criteria": "adherence, fluency",
        "answers": "Answer A: …\n\nAnswer B: …",
        "labels": "A, B",
        "cause": "o pouso foi feito acima da velocidade",
        "effect": "a aeronave saiu da pista",
        "level": "L2",
        "level_definition": "L2 — intervenção: …",
        "stem": "O que acontecerá se {INTERVENTION}?",
        # CausalBench
        "scenario": "def f(x):\n    return 2 * x",
        "domain": "code",
        "perspectives": "- cause_to_effect: …",
        # CausalityCheck checklist templates
        "options": "1. …\n2. …",
        "source_context": "Houve seca.",
        "chain": "seca → menos energia",
        "verdict": "correct_and_reliable",
        "verdict_definition": "…",
        "verdict_definitions": "- correct_and_reliable: …",
        "letters": "A, B",
    }
    return {name: values[name] for name in call_kind(kind).variables}


def test_every_shipped_template_renders_and_a_schema_valid_reply_validates():
    for template in PromptTemplate.objects.all():
        variables = _variables(template.kind)
        text = render(template.system, variables) + render(template.user, variables)
        assert "{{" not in text, template
        assert set(placeholders(template.system + template.user)) <= call_kind(template.kind).variables
        example = example_for_schema(template.output_schema)
        assert validation_error(example, template.output_schema) is None, template


def test_the_class_informed_prompt_differs_from_the_class_agnostic_one_only_by_the_class_line():
    for language in ("pt-BR", "en"):
        agnostic = template_latest(kind="answer", language=language, name="class-agnostic")
        informed = template_latest(kind="answer", language=language, name="class-informed")
        assert agnostic.system == informed.system
        extra = [line for line in informed.user.splitlines() if line not in agnostic.user.splitlines()]
        assert len(extra) == 1 and "{{ causal_class }}" in extra[0] and "{{ class_description }}" in extra[0]


def test_the_distractor_template_asks_for_the_four_meter_categories_with_reasoning():
    for language in ("pt-BR", "en"):
        schema = template_latest(kind="distractors", language=language).output_schema
        assert schema["required"] == ["contradictory", "unfounded", "reversal", "irrelevant"]
        assert schema["properties"]["reversal"]["required"] == ["option_text", "reasoning"]


def test_each_app_ships_the_prompts_of_the_kinds_it_registers_in_its_own_folder():
    folders = {folder.parent.name: folder for folder in template_dirs()}
    assert {"generation", "evaluation", "meter", "causalbench", "causalitycheck"} <= set(folders)
    generation_kinds = {path.name.split(".")[0] for path in folders["generation"].glob("*/*.yaml")}
    assert generation_kinds == {"questions", "answer", "distractors", "revision"}
    meter_kinds = {path.name.split(".")[0] for path in folders["meter"].glob("*/*.yaml")}
    assert meter_kinds == {"decontamination", "meter_question"}
