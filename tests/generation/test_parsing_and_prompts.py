"""Output parsing and prompt rendering, on their own (generation/llm has no Django in it)."""

import pytest

from generation.llm.parsing import NoJSONFound, coerce_root, extract_json, validation_error
from generation.llm.prompts import MissingVariables, build_messages, placeholders, render


@pytest.mark.parametrize(
    "text, expected",
    [
        ('{"a": 1}', {"a": 1}),
        ('Aqui está:\n```json\n{"a": 2}\n```', {"a": 2}),
        ('<think>hmm {"a": 0}</think>\n{"a": 3}', {"a": 3}),
        ('Resposta: {"a": 4} — espero que ajude', {"a": 4}),
        ("[1, 2]", [1, 2]),
    ],
)
def test_json_is_found_in_prose_fences_and_after_reasoning(text, expected):
    assert extract_json(text) == expected


@pytest.mark.parametrize(
    "text, words", [("", "empty"), ("sem json aqui", "no JSON"), ('{"a": ', "not valid JSON")]
)
def test_replies_without_usable_json_say_why(text, words):
    with pytest.raises(NoJSONFound, match=words):
        extract_json(text)


def test_a_bare_array_is_wrapped_when_the_schema_wants_an_object_holding_one():
    schema = {"type": "object", "properties": {"questions": {"type": "array"}}, "required": ["questions"]}
    assert coerce_root([{"question": "q"}], schema) == {"questions": [{"question": "q"}]}
    assert coerce_root({"questions": []}, schema) == {"questions": []}


def test_validation_names_each_problem_and_its_place():
    schema = {
        "type": "object",
        "properties": {
            "scores": {"type": "object", "properties": {"fluency": {"type": "integer", "maximum": 5}}}
        },
        "required": ["scores", "justification"],
    }
    problem = validation_error({"scores": {"fluency": 9}}, schema)
    assert "at scores/fluency: 9 is greater than the maximum of 5" in problem
    assert "'justification' is a required property" in problem
    assert validation_error({"scores": {}, "justification": ""}, schema) is None


def test_placeholders_are_filled_and_a_missing_one_is_an_error():
    assert (
        render("Pergunta: {{ question }} ({{count}})", {"question": "Por quê?", "count": 3})
        == "Pergunta: Por quê? (3)"
    )
    with pytest.raises(MissingVariables, match="topic"):
        render("{{ topic }} {{ question }}", {"question": "q"})


def test_sections_appear_only_when_their_variable_is_not_empty():
    text = "{{#context}}Contexto: {{ context }}\n{{/context}}{{^context}}(sem contexto) {{/context}}P: {{ question }}"
    assert render(text, {"context": "Um parágrafo.", "question": "q"}) == "Contexto: Um parágrafo.\nP: q"
    assert render(text, {"context": "", "question": "q"}) == "(sem contexto) P: q"
    assert placeholders(text) == ["context", "question"]


def test_model_text_is_not_html_escaped_in_prompts():
    assert render("{{ question }}", {"question": "<b>x</b> & y"}) == "<b>x</b> & y"


def test_text_mode_messages_carry_the_schema_and_structured_ones_do_not():
    schema = {"type": "object"}
    structured = build_messages(system="s", user="u", schema=schema, structured=True)
    text_mode = build_messages(system="s", user="u", schema=schema, structured=False)
    assert structured == [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}]
    assert "JSON schema" in text_mode[-1]["content"] and '{"type": "object"}' in text_mode[-1]["content"]


def test_sections_may_nest():
    text = (
        "{{#topic}}sobre {{ topic }}{{#words}} ({{ words }}){{/words}}.{{/topic}}{{^topic}}livre.{{/topic}}"
    )
    assert render(text, {"topic": "Educação", "words": "escola"}) == "sobre Educação (escola)."
    assert render(text, {"topic": "Educação", "words": ""}) == "sobre Educação."
    assert render(text, {"topic": "", "words": "x"}) == "livre."
