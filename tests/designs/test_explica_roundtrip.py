"""ExpliCa's published pair file goes in with every column kept (``additional_dimension`` included), through the
release and out again under the published names and values: the exported file is the input, column by column,
and re-imports unchanged. A new ExpliCa project is English by default."""

import csv
import io

import pytest
from django.core.management import call_command

from annotation.importing import questions_import
from annotation.models import Item, Project
from annotation.projects import project_create
from evaluation.releases.export import export_release
from tests.evaluation.runs import release_of

pytestmark = pytest.mark.django_db

COLUMNS = [
    "pair_id",
    "Sentence_A",
    "Sentence_B",
    "rating_anticonic_causal",
    "rating_iconic_causal",
    "rating_anticonic_temporal",
    "rating_iconic_temporal",
    "human_preferred_connective",
    "human_preferred_connective_desc",
    "additional_dimension",
]
ROWS = [
    ["1", "The road was icy", "The car skidded", "2.1", "8.4", "1.8", "6.9", "so", "iconic_caus", "physical"],
    [
        "2",
        "She opened the window",
        "The room got cold",
        "3.05",
        "7.5",
        "2.2",
        "6.25",
        "so",
        "iconic_caus",
        "",
    ],
    [
        "3",
        "He bought a new hat",
        "The train left on time",
        "1.2",
        "1.4",
        "1.9",
        "2.05",
        "and",
        "unrel",
        "socially_challenging",
    ],
]


def published_file(rows=ROWS) -> bytes:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(COLUMNS)
    writer.writerows(rows)
    return out.getvalue().encode()


def read_csv(data: bytes) -> list[dict]:
    return list(csv.DictReader(io.StringIO(data.decode("utf-8-sig"))))


@pytest.fixture
def explica(owner):
    return project_create(name="ExpliCa", slug="explica-rt", design="explica", created_by=owner)


def test_a_new_explica_project_is_english_by_default_and_others_portuguese(explica, owner, capsys):
    assert explica.language == "en"
    other = project_create(name="QA", slug="qa-default", design="causal_qa_pt", created_by=owner)
    assert other.language == "pt-BR"
    call_command("create_project", "explica-cli", "ExpliCa CLI", design="explica")
    assert Project.objects.get(slug="explica-cli").language == "en"


def test_every_published_column_is_kept_on_import(explica):
    batch = questions_import(project=explica, data=published_file(), filename="explica.csv")

    assert batch.funnel["published"]["kept_fields"] == [
        "additional_dimension",
        "human_preferred_connective",
        "human_preferred_connective_desc",
    ]
    item = explica.items.filter(group__external_id="1").first()
    assert item.metadata["published"]["additional_dimension"] == "physical"
    assert item.metadata["published"]["human_preferred_connective_desc"] == "iconic_caus"
    unrelated = explica.items.filter(group__external_id="3").first()
    assert unrelated.metadata["published"]["human_preferred_connective"] == "and"


def test_import_release_export_gives_back_the_published_file_column_by_column(explica, tmp_path):
    questions_import(project=explica, data=published_file(), filename="explica.csv")
    explica.items.update(status=Item.Status.APPROVED)
    release = release_of(explica, ratios=(0, 0, 1))

    export_release(release, tmp_path / "out", formats=("jsonl",))
    exported = (tmp_path / "out" / "explica" / "explica.csv").read_bytes()

    rows = read_csv(exported)
    assert list(rows[0]) == COLUMNS
    original = read_csv(published_file())
    for column in COLUMNS:
        assert [row[column] for row in rows] == [row[column] for row in original], column
    for name in ("explica_pairs.csv", "explica_items.csv"):
        header = (tmp_path / "out" / "explica" / name).read_text().splitlines()[0]
        assert header.startswith("pair_id,"), name

    again = project_create(name="ExpliCa again", slug="explica-again", design="explica", created_by=None)
    questions_import(project=again, data=exported, filename="explica.csv")
    assert sorted(again.items.values_list("group__external_id", "metadata__published")) == sorted(
        explica.items.values_list("group__external_id", "metadata__published")
    )
