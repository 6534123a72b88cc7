"""CausalityCheck's multiple-choice seeds as published (Context, Question, Choice_1–4, Answer 1–4, the
reasoning chain where given) imported as seeds; a row with every ingredient is derived into its 36 items at
once."""

import csv
import io
import json

import pytest
from django.core.management import CommandError, call_command

from annotation.designs import design_for
from annotation.models import ItemGroup
from annotation.projects import project_create
from designs.causalitycheck.design import DATA
from designs.causalitycheck.published import published_seeds_import
from designs.causalitycheck.seeds import INGREDIENTS, SEED_KIND, SeedInvalid, cells

pytestmark = pytest.mark.django_db

EXAMPLE = DATA / "causalitycheck_published_seeds.csv"


@pytest.fixture
def causalitycheck(owner):
    return project_create(
        name="CausalityCheck publicado", slug="cc-publicado", design="causalitycheck", created_by=owner
    )


def rows() -> list[dict]:
    return list(csv.DictReader(io.StringIO(EXAMPLE.read_text(encoding="utf-8"))))


def as_csv(records: list[dict]) -> bytes:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(records[0]))
    writer.writeheader()
    writer.writerows(records)
    return out.getvalue().encode()


def test_each_row_becomes_a_seed_with_its_four_options_answer_and_reasoning_chain(causalitycheck):
    seeds, derived = published_seeds_import(
        project=causalitycheck, data=EXAMPLE.read_bytes(), filename=EXAMPLE.name
    )

    assert [seed.external_id for seed in seeds] == ["cp-h-0001", "cp-h-0002", "cp-m-0003"]
    first = seeds[0]
    assert first.kind == SEED_KIND and first.context.startswith("Journalists are facing criticism")
    question = "What is the result of the surge in interest in AI in terms of media coverage?"
    assert first.metadata["question"] == question
    assert len(first.metadata["options"]) == 4
    assert first.metadata["answer_index"] == 2  # the paper's "Answer: 3"
    assert first.metadata["ingredients"] == {
        "causal_chain": (
            "surge in interest in AI → increased media coverage → greater responsibility on the media to report "
            "on AI accurately"
        )
    }
    assert seeds[2].metadata["ingredients"] == {}  # no chain given
    assert derived == 0 and not causalitycheck.items.exists()  # the checklist job writes what the seeds lack


def test_the_import_command_routes_the_published_seeds_to_the_reader(causalitycheck, capsys):
    call_command("import_questions", str(EXAMPLE), project=causalitycheck.slug)

    assert "3 seeds added, 0 checklist items derived" in capsys.readouterr().out
    assert ItemGroup.objects.filter(project=causalitycheck, kind=SEED_KIND).count() == 3


def test_a_seed_published_with_every_ingredient_is_derived_into_its_36_items(causalitycheck):
    spec = json.loads((DATA / "causalitycheck.json").read_text(encoding="utf-8"))["seeds"][0]
    record = {
        "id": spec["external_id"],
        "Context": spec["context"],
        "Question": spec["question"],
        **{f"Choice_{n}": text for n, text in enumerate(spec["options"], start=1)},
        "Answer": "ABCD"[spec["answer_index"]],
        **{name: spec[name] for name in INGREDIENTS},
    }
    data = (json.dumps(record, ensure_ascii=False) + "\n").encode()

    design = design_for(causalitycheck)
    added = design.published_import(project=causalitycheck, data=data, filename="seeds.jsonl")

    assert added == "1 seeds added, 36 checklist items derived"
    items = causalitycheck.items.all()
    assert items.count() == 36
    assert {item.metadata["cell"] for item in items} == {f"{v.upper()}-{t.upper()}" for t, v in cells()}


@pytest.mark.parametrize(
    "break_it, problem",
    [
        (lambda r: r.update(Answer="5"), "row 2: answer must be 1, 2, 3 or 4 (or A to D), not '5'"),
        (lambda r: r.update(Choice_4=""), "row 2: options must be a list of four non-empty texts"),
        (lambda r: r.update(Question=" "), "row 2: question is missing or empty"),
        (lambda r: r.update(ID="cp-h-0001"), "row 2: the project already has a seed with this id"),
    ],
)
def test_a_broken_row_is_refused_naming_the_row_and_nothing_is_written(causalitycheck, break_it, problem):
    records = rows()
    break_it(records[1])

    with pytest.raises(SeedInvalid) as raised:
        published_seeds_import(project=causalitycheck, data=as_csv(records), filename="seeds.csv")

    assert problem in str(raised.value)
    assert not ItemGroup.objects.filter(project=causalitycheck).exists()


def test_a_missing_column_is_named_and_the_command_imports_nothing(causalitycheck, tmp_path):
    records = [{key: value for key, value in record.items() if key != "Answer"} for record in rows()]
    path = tmp_path / "seeds.csv"
    path.write_bytes(as_csv(records))

    with pytest.raises(CommandError, match="Nothing was imported: seeds.csv: missing column\\(s\\) answer"):
        call_command("import_questions", str(path), project=causalitycheck.slug)
    assert not ItemGroup.objects.filter(project=causalitycheck).exists()


def test_files_without_the_four_choices_are_left_to_the_common_import(causalitycheck):
    design = design_for(causalitycheck)
    assert (
        design.published_import(
            project=causalitycheck, data=b"question,answer\nWhy?,Because.\n", filename="q.csv"
        )
        is None
    )


def test_a_key_that_only_later_seeds_have_is_kept_as_metadata(causalitycheck):
    """The columns of a JSON array are named by its first records: a key that first appears further on is
    still the seed's own, and kept."""
    from tests.designs import causalitycheck_files as files

    records = [files.seed_record(number) for number in range(1, 81)]
    records[70]["source_dataset"] = "COPA"

    seeds, _derived = published_seeds_import(
        project=causalitycheck, data=files.array(records), filename="CausalProbe-H.json"
    )

    assert len(seeds) == 80
    assert ItemGroup.objects.get(project=causalitycheck, external_id="71").metadata["published"] == {
        "source_dataset": "COPA"
    }


def test_every_refused_seed_row_is_listed_with_its_reason_and_the_report_names_the_fields(
    causalitycheck, owner, client_for
):
    from tests.designs import causalitycheck_files as files
    from tests.designs.published_pages import upload_and_import

    records = [files.seed_record(number) for number in range(1, 6)]
    records[1]["answer"] = 0  # the published answers count from 1
    records[3]["question"] = ""
    records[4]["id"] = 1
    client = client_for(owner)

    batch, page = upload_and_import(client, causalitycheck, "CausalProbe-H.json", files.array(records))

    assert [(error["line"], error["reason"]) for error in batch.errors] == [
        (2, "answer must be 1, 2, 3 or 4 (or A to D), not 0"),
        (4, "question is missing or empty"),
        (5, "the project already has a seed with this id (row 1)"),
    ]
    assert "line 4: question is missing or empty" in page
    assert "goes in whole: fix the rows listed and import it again" in page
    assert "Skip invalid rows" not in page  # the published readers take a file whole or not at all
    from django.utils import translation

    from annotation.importing.reasons import reason_translated

    with translation.override("pt-br"):
        assert [reason_translated(error["reason"]) for error in batch.errors] == [
            "answer deve ser 1, 2, 3 ou 4 (ou A a D), não 0",
            "question está ausente ou vazio",
            "o projeto já tem uma semente com este id (linha 1)",
        ]
    assert not ItemGroup.objects.filter(project=causalitycheck).exists()

    records = [files.seed_record(number) for number in range(1, 4)]
    records[2]["source_dataset"] = "COPA"
    batch, _page = upload_and_import(client, causalitycheck, "CausalProbe-H.json", files.array(records))
    report = batch.funnel["published"]
    assert (report["records"], report["groups"], report["items"]) == (3, 3, 0)
    assert report["used_fields"] == sorted(
        ["id", "context", "question", "choice_1", "choice_2", "choice_3", "choice_4", "answer"]
    )
    assert report["kept_fields"] == ["source_dataset"]
