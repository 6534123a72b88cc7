"""METER's ``dataset.jsonl`` exactly as the authors publish it: a context per line and its list of questions
(``ladder``, ``question``, a 0-based ``answer``, ``option_0`` … ``option_4``), no id (an entry is named by its
file and line), no cause–effect pair."""

import json

import pytest
from django.core.management import CommandError, call_command

from annotation.designs import design_for
from annotation.importing.published import PublishedRowsRefused
from annotation.models import Item, ItemGroup
from annotation.projects import project_create
from designs.meter import pipeline
from designs.meter.published import published_dataset_import

pytestmark = pytest.mark.django_db


def question(ladder: str, text: str, answer: int, **extra) -> dict:
    return {
        "ladder": ladder,
        "question": text,
        "answer": answer,
        **{f"option_{index}": f"{text} — option {index}" for index in range(5)},
        **extra,
    }


RECORDS = [
    {
        "context": "A frost in May killed the apple blossoms. The orchard sold half its usual harvest.",
        "questions": [
            question("Causal_Discovery", "What reduced the harvest?", 0),
            question("Intervention", "What if the orchard had covered the trees?", 3),
            question("Counterfactual", "Had there been no frost, what would the harvest have been?", 4),
        ],
    },
    {
        "context": "The bridge closed for repairs, so the buses took the long road through the hills.",
        "questions": [
            question("causal_discovery", "Why did the buses take the long road?", 2, difficulty="easy"),
            question("COUNTERFACTUAL", "Had the bridge stayed open, which road would they take?", 1),
        ],
        "domain": "transport",
    },
]


def as_jsonl(records: list[dict]) -> bytes:
    return "\n".join(json.dumps(record, ensure_ascii=False) for record in records).encode() + b"\n"


@pytest.fixture
def meter(owner):
    return project_create(name="METER", slug="meter-dataset", design="meter", created_by=owner)


def test_each_line_becomes_an_entry_and_each_question_an_item_at_its_ladder_level(meter):
    report = published_dataset_import(project=meter, data=as_jsonl(RECORDS), filename="dataset.jsonl")

    assert (report.records, report.groups, report.items) == (2, 2, 5)
    first = ItemGroup.objects.get(project=meter, external_id="dataset-1")
    assert first.kind == pipeline.ENTRY
    assert first.context.startswith("A frost in May")
    questions = list(first.items.order_by("position_in_group"))
    assert [q.causal_class for q in questions] == ["L1", "L2", "L3"]
    assert [q.metadata["ladder"] for q in questions] == ["Causal_Discovery", "Intervention", "Counterfactual"]
    assert all(q.status == Item.Status.IN_REVIEW for q in questions)
    assert all(q.metadata["stage"] == "editing" for q in questions)
    second = ItemGroup.objects.get(project=meter, external_id="dataset-2")
    assert [q.causal_class for q in second.items.order_by("position_in_group")] == ["L1", "L3"]


def test_the_answer_is_the_0_based_index_of_the_correct_option(meter):
    published_dataset_import(project=meter, data=as_jsonl(RECORDS), filename="dataset.jsonl")

    for external_id, answer in [
        ("dataset-1-q1", 0),
        ("dataset-1-q2", 3),
        ("dataset-1-q3", 4),
        ("dataset-2-q1", 2),
    ]:
        item = meter.items.get(external_id=external_id)
        options = list(item.options.order_by("position"))
        assert [option.text.rsplit(" ", 1)[-1] for option in options] == ["0", "1", "2", "3", "4"]
        assert [option.role for option in options].index("correct") == answer, external_id
        assert item.reference_answer == options[answer].text
        assert item.metadata["published_answer"] == answer


def test_fields_the_item_is_not_made_of_are_kept_as_metadata_and_reported(meter):
    report = published_dataset_import(project=meter, data=as_jsonl(RECORDS), filename="dataset.jsonl")

    assert report.kept == {"difficulty", "domain"}
    assert "kept as item metadata: difficulty, domain" in report.summary()
    item = meter.items.get(external_id="dataset-2-q1")
    assert item.metadata["published"] == {"domain": "transport", "difficulty": "easy"}
    assert ItemGroup.objects.get(project=meter, external_id="dataset-2").metadata["published"] == {
        "domain": "transport"
    }


@pytest.mark.parametrize(
    "spoil, where",
    [
        (lambda q: q.update(answer=5), "line 2, questions[1].answer: must be the correct option's index"),
        (
            lambda q: q.update(ladder="Association"),
            "line 2, questions[1].ladder: unknown ladder 'Association'",
        ),
        (lambda q: q.pop("option_4"), "line 2, questions[1].option_4: is missing or empty"),
    ],
)
def test_a_question_that_does_not_fit_is_refused_with_its_line_and_nothing_is_written(meter, spoil, where):
    records = json.loads(json.dumps(RECORDS))
    spoil(records[1]["questions"][1])

    with pytest.raises(PublishedRowsRefused) as excinfo:
        published_dataset_import(project=meter, data=as_jsonl(records), filename="dataset.jsonl")

    assert where in str(excinfo.value)
    assert "1 of 2 records refused" in str(excinfo.value)
    assert not meter.items.exists()
    assert not ItemGroup.objects.filter(project=meter).exists()


def test_the_page_and_the_command_take_the_published_file(meter, owner, client_for, tmp_path, capsys):
    from tests.designs.published_pages import upload_and_import

    path = tmp_path / "dataset.jsonl"
    path.write_bytes(as_jsonl(RECORDS[:1]))
    call_command("import_questions", str(path), project=meter.slug)
    assert "1 records read; 1 entries and 3 items added" in capsys.readouterr().out

    batch, page = upload_and_import(client_for(owner), meter, "dataset_part2.jsonl", as_jsonl(RECORDS[1:]))
    assert "1 entries and 2 items added" in page
    assert "Published fields kept as item metadata:" in page
    assert batch.funnel["published"]["kept_fields"] == ["difficulty", "domain"]
    assert meter.items.count() == 5

    with pytest.raises(
        CommandError, match="the entry of this line of dataset.jsonl is already in the project"
    ):
        call_command("import_questions", str(path), project=meter.slug)


def test_the_design_recognises_the_published_file_and_leaves_others_to_the_common_import(meter):
    design = design_for(meter)
    assert design.published_import(project=meter, data=b'{"question": "Why?"}\n', filename="q.jsonl") is None
