"""METER's JSONL as published, imported into METER's own shapes: an entry per line, its three level questions
at the editing stage, five options at their published letters with the answer's option the correct one."""

import json

import pytest
from django.core.management import CommandError, call_command

from annotation.designs import design_for
from annotation.models import Item, ItemGroup, Option
from annotation.projects import project_create
from designs.meter import pipeline
from designs.meter.published import PublishedMeterError, published_entries_import
from designs.meter.stems import DATA

pytestmark = pytest.mark.django_db

EXAMPLE = (DATA / "meter_published.jsonl").read_bytes()


@pytest.fixture
def meter(owner):
    return project_create(name="METER publicado", slug="meter-publicado", design="meter", created_by=owner)


def lines(data: bytes) -> list[dict]:
    return [json.loads(line) for line in data.decode().splitlines() if line.strip()]


def as_jsonl(records: list[dict]) -> bytes:
    return "\n".join(json.dumps(record, ensure_ascii=False) for record in records).encode() + b"\n"


def test_each_line_becomes_an_entry_with_its_pair_and_three_questions_of_five_options(meter):
    entries = published_entries_import(project=meter, data=EXAMPLE)

    assert [entry.external_id for entry in entries] == ["meter-0001", "meter-0002", "meter-0003"]
    first = ItemGroup.objects.get(project=meter, external_id="meter-0001")
    assert first.kind == pipeline.ENTRY and first.context.startswith("A thrombus formed on a ruptured plaque")
    assert first.metadata["cause"].startswith("a thrombus formed") and first.metadata["stage"] == "editing"
    questions = list(first.items.order_by("position_in_group"))
    assert [(q.causal_class, q.metadata["level"], q.metadata["stage"]) for q in questions] == [
        ("L1", "L1", "editing"),
        ("L2", "L2", "editing"),
        ("L3", "L3", "editing"),
    ]
    assert all(q.status == Item.Status.IN_REVIEW for q in questions)
    assert all(q.metadata["role"] == pipeline.QUESTION for q in questions)
    options = list(questions[0].options.order_by("position"))
    assert len(options) == 5 and options[1].role == "correct"  # the published answer is B, kept at B
    assert questions[0].reference_answer == options[1].text
    assert [option.role for option in options].count("other") == 4  # the published file says no categories
    assert pipeline.stage_counts(meter) == {"editing": 3}
    assert Option.objects.filter(item__project=meter).count() == 3 * 3 * 5


def test_the_import_command_routes_a_meter_project_s_jsonl_to_the_published_reader(meter, capsys):
    call_command("import_questions", str(DATA / "meter_published.jsonl"), project=meter.slug)

    assert "3 entries added, three questions each" in capsys.readouterr().out
    assert meter.items.count() == 9


def test_categories_and_rationales_given_per_letter_become_the_options_roles(meter):
    record = lines(EXAMPLE)[0]
    record["L1"]["categories"] = {
        "A": "irrelevant",
        "B": "correct",
        "C": "unfounded",
        "D": "reversal",
        "E": "contradictory",
    }
    record["L1"]["rationales"] = {"D": "Inverts the ischemia and the plaque rupture."}

    [entry] = published_entries_import(project=meter, data=as_jsonl([record]))

    l1 = entry.items.get(metadata__level="L1")
    assert {option.position: option.role for option in l1.options.all()} == {
        0: "irrelevant",
        1: "correct",
        2: "unfounded",
        3: "reversal",
        4: "contradictory",
    }
    assert l1.options.get(role="reversal").rationale == "Inverts the ischemia and the plaque rupture."


@pytest.mark.parametrize(
    "break_it, problem",
    [
        (lambda r: r["L2"].update(answer="F"), "line 2, L2: answer must be a letter A to E, not 'F'"),
        (lambda r: r["L3"]["options"].pop("E"), "line 2, L3: options must be five non-empty texts, A to E"),
        (lambda r: r.pop("L1"), "line 2, L1: the question is missing"),
        (lambda r: r.update(effect=""), "line 2: effect missing or empty"),
        (lambda r: r["L1"].update(categories={"A": "wrong"}), "line 2, L1: categories must name"),
    ],
)
def test_a_broken_line_is_refused_naming_the_line_and_nothing_is_written(meter, break_it, problem):
    records = lines(EXAMPLE)
    break_it(records[1])

    with pytest.raises(PublishedMeterError) as raised:
        published_entries_import(project=meter, data=as_jsonl(records))

    assert problem in str(raised.value)
    assert not ItemGroup.objects.filter(project=meter).exists() and not meter.items.exists()


def test_malformed_json_and_repeated_ids_are_refused_by_line(meter):
    with pytest.raises(PublishedMeterError, match=r"line 2: malformed JSON"):
        published_entries_import(project=meter, data=EXAMPLE.split(b"\n")[0] + b'\n{"id": \n')
    records = lines(EXAMPLE)
    records[2]["id"] = "meter-0001"
    with pytest.raises(PublishedMeterError, match=r"line 3: id 'meter-0001' is also on line 1"):
        published_entries_import(project=meter, data=as_jsonl(records))
    published_entries_import(project=meter, data=EXAMPLE)
    already = "Nothing was imported: line 1: entry meter-0001 is already in the project"
    with pytest.raises(CommandError, match=already):
        call_command("import_questions", str(DATA / "meter_published.jsonl"), project=meter.slug)
    assert ItemGroup.objects.filter(project=meter).count() == 3


def test_files_of_another_shape_are_left_to_the_common_import(meter):
    design = design_for(meter)
    rows = b"question,answer\nWhy?,Because.\n"
    assert design.published_import(project=meter, data=rows, filename="q.csv") is None
    assert design.published_import(project=meter, data=b'{"question": "Why?"}\n', filename="q.jsonl") is None


def test_the_import_page_takes_the_published_file_and_names_a_broken_line(meter, owner, client_for):
    from annotation.models import ImportBatch
    from tests.designs.published_pages import upload_and_import

    records = lines(EXAMPLE)
    records[2]["L3"]["answer"] = ""
    batch, page = upload_and_import(client_for(owner), meter, "meter.jsonl", as_jsonl(records))
    assert batch.status == ImportBatch.Status.FAILED
    assert "Nothing was imported" in page
    assert "line 3, L3: answer must be a letter A to E" in page
    assert not meter.items.exists()

    batch, page = upload_and_import(client_for(owner), meter, "meter.jsonl", EXAMPLE)
    assert batch.status == ImportBatch.Status.DONE
    assert "3 entries added, three questions each" in page
    assert meter.items.count() == 9
