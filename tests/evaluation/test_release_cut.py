"""Cutting releases: frozen, reproducible, stratified snapshots with a checksum and a dataset card."""

import hashlib
import io
from collections import Counter, defaultdict

import pytest
import yaml
from django.core.management import CommandError, call_command

from annotation.models import ImportBatch, Item, Revision
from annotation.services import Author, item_revise
from evaluation.models import Release, ReleaseItem
from evaluation.releases.export import export_release
from evaluation.releases.splits import SplitRatioError
from evaluation.services import ReleaseError, release_cut
from generation.models import LLMCall, ModelEndpoint, PromptTemplate
from tests.evaluation.helpers import approved_items, judge, with_options
from tests.factories import ItemFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def gold(project):
    return approved_items(
        project, {"associational": 40, "interventional": 30, "counterfactual": 20}, answer_by_model_every=3
    )


def split_of(release) -> dict[int, str]:
    return dict(release.items.values_list("item_id", "split"))


def test_a_release_freezes_every_approved_item_once(project, gold, owner):
    ItemFactory(project=project, status=Item.Status.IN_REVIEW)  # not gold, so not released
    release = release_cut(project=project, user=owner)
    assert release.status == Release.Status.READY and release.tag == "v1"
    assert release.items.count() == 90 and set(split_of(release)) == {item.pk for item in gold}
    assert release.counts["splits"] == {"train": 72, "dev": 9, "test": 9}


def test_splits_are_stratified_by_causal_class(project, gold):
    release = release_cut(project=project)
    counts = Counter(release.items.values_list("causal_class", "split"))
    assert counts[("associational", "train")] == 32 and counts[("associational", "dev")] == 4
    assert counts[("interventional", "train")] == 24 and counts[("interventional", "test")] == 3
    assert counts[("counterfactual", "train")] == 16 and counts[("counterfactual", "dev")] == 2


def test_items_of_a_group_share_a_split(project):
    approved_items(project, {"associational": 24, "counterfactual": 16}, groups_of=4)
    release = release_cut(project=project, seed=3)
    splits_per_group = defaultdict(set)
    for item_id, split in split_of(release).items():
        splits_per_group[Item.objects.get(pk=item_id).group_id].add(split)
    assert len(splits_per_group) == 10
    assert all(len(splits) == 1 for splits in splits_per_group.values())
    assert {split for splits in splits_per_group.values() for split in splits} == {"train", "dev", "test"}


def test_the_same_seed_gives_the_same_splits_and_checksum(project, gold):
    first = release_cut(project=project, seed=11)
    second = release_cut(project=project, seed=11)
    other = release_cut(project=project, seed=12)
    assert (first.version, second.version, other.version) == (1, 2, 3)
    assert split_of(first) == split_of(second) and first.checksum == second.checksum
    assert split_of(first) != split_of(other) and first.checksum != other.checksum


def test_later_edits_never_change_a_release(project, gold, curator, tmp_path):
    release = release_cut(project=project)
    export_release(release, tmp_path / "before")
    item = gold[0]
    frozen = ReleaseItem.objects.get(release=release, item=item).data

    item_revise(
        item=item,
        changes={"question": "Uma pergunta reescrita depois?", "reference_answer": "Outra."},
        author=Author(user=curator),
    )
    Item.objects.filter(pk=gold[1].pk).update(status=Item.Status.REJECTED)
    gold[2].delete()

    release.refresh_from_db()
    assert ReleaseItem.objects.get(release=release, item=item).data == frozen
    assert release.items.count() == 90  # the deleted item's record stays, its link is cleared
    export_release(release, tmp_path / "after")
    for name in ("data/train.jsonl", "data/dev.csv", "data/test.parquet", "README.md", "checksums.txt"):
        assert (tmp_path / "before" / name).read_bytes() == (tmp_path / "after" / name).read_bytes()
    next_release = release_cut(project=project)
    assert next_release.checksum != release.checksum and next_release.items.count() == 88


def test_the_checksum_is_the_sha256_of_the_three_jsonl_files(project, gold, tmp_path):
    release = release_cut(project=project)
    export_release(release, tmp_path, ("jsonl",))
    digest = hashlib.sha256()
    for split in ("train", "dev", "test"):
        digest.update((tmp_path / f"data/{split}.jsonl").read_bytes())
    assert digest.hexdigest() == release.checksum


def test_a_project_without_approved_items_cannot_be_released(project):
    ItemFactory(project=project, status=Item.Status.IN_REVIEW)
    with pytest.raises(ReleaseError, match="no approved items"):
        release_cut(project=project)
    assert not Release.objects.exists()


def test_bad_split_ratios_are_refused_before_anything_is_written(project, gold):
    with pytest.raises(SplitRatioError):
        release_cut(project=project, split_ratios="0.5,0.1,0.1")
    assert not Release.objects.exists()


def test_a_failed_build_keeps_nothing(project, gold, monkeypatch):
    from evaluation.releases import build

    def broken(*args, **kwargs):
        raise RuntimeError("disk full")

    monkeypatch.setattr(build, "canonical_line", broken)
    with pytest.raises(RuntimeError):
        release_cut(project=project)
    release = Release.objects.get()
    assert release.status == Release.Status.FAILED and "disk full" in release.error
    assert not release.items.exists()


def test_the_card_has_a_hugging_face_header_and_the_papers_tables(project, gold, owner, annotators):
    for item in gold[:12]:
        for annotator in annotators:
            judge(item, annotator)
    ImportBatch.objects.create(
        project=project,
        filename="q.csv",
        status=ImportBatch.Status.DONE,
        funnel={"read": 500, "causal": 400, "unique": 380, "in_length": 350, "imported": 340},
    )
    endpoint = ModelEndpoint.objects.create(name="local", base_url="http://127.0.0.1:1/v1", model="gpt-5")
    template = PromptTemplate.objects.create(kind="revision", name="from-feedback", version=3, user="Revise.")
    call = LLMCall.objects.create(purpose="revision", endpoint=endpoint, template=template, item=gold[5])
    Revision.objects.create(
        item=gold[5], number=2, kind=Revision.Kind.MODEL, llm_call_id=call.pk, snapshot={}
    )

    release = release_cut(project=project, user=owner, license="cc-by-sa-4.0")
    header_text, body = release.card.split("\n---\n", 1)
    header = yaml.safe_load(header_text.removeprefix("---\n"))
    assert header["license"] == "cc-by-sa-4.0" and header["language"] == ["pt"]
    assert header["configs"] == [
        {
            "config_name": "default",
            "data_files": [
                {"split": "train", "path": "data/train.parquet"},
                {"split": "dev", "path": "data/dev.parquet"},
                {"split": "test", "path": "data/test.parquet"},
            ],
        }
    ]
    assert "| associational | 32 | 4 | 4 | 40 |" in body
    # Table 3 of Causal_QA.PT: every third item of each class has a model-written answer.
    assert "| associational | 40 | 26 | 14 |" in body and "| **Total** | 90 | 59 | 31 |" in body
    assert "| rows read from source files | 500 |" in body and "| in this release | 90 |" in body
    assert "| llama-70b | answer/class-agnostic v2 | answer | 31 |" in body
    assert "| gpt-5 | revision/from-feedback v3 | answer revision | 1 |" in body
    assert "Krippendorff's α" in body and "| Vote | nominal | 12 |" in body
    assert f"SHA-256 {release.checksum}" in body and "@misc{causal_qa_v1" in body


def test_multiple_choice_options_are_frozen_with_their_roles(project):
    item = with_options(approved_items(project, {"associational": 3})[0])
    release = release_cut(project=project)
    record = ReleaseItem.objects.get(release=release, item=item).data
    assert [option["role"] for option in record["options"]] == [
        "correct",
        "contradictory",
        "unfounded",
        "reversal",
        "irrelevant",
    ]
    assert record["correct_option"] == "A" and record["options"][1]["letter"] == "B"


def test_the_release_command_prints_the_version(project, gold):
    out = io.StringIO()
    call_command(
        "release", project.slug, "--seed", "4", "--splits", "0.7,0.2,0.1", stdout=out, stderr=io.StringIO()
    )
    assert out.getvalue().strip() == "v1"
    release = Release.objects.get()
    assert release.seed == 4 and release.split_ratios == {"train": 0.7, "dev": 0.2, "test": 0.1}
    call_command("release", project.slug, stdout=out, stderr=io.StringIO())
    assert out.getvalue().split() == ["v1", "v2"]


@pytest.mark.parametrize(
    ("args", "message"),
    [(["nope"], "(?i)no project"), (["causal-qa", "--splits", "1,1,1"], "add up to 1")],
)
def test_the_release_command_explains_refusals(project, gold, args, message):
    with pytest.raises(CommandError, match=message):
        call_command("release", *args, stdout=io.StringIO(), stderr=io.StringIO())


def test_export_release_writes_the_requested_formats(project, gold, tmp_path):
    release_cut(project=project)
    out = io.StringIO()
    call_command(
        "export_release",
        project.slug,
        "v1",
        "--out",
        str(tmp_path),
        "--format",
        "jsonl,csv",
        stdout=out,
        stderr=io.StringIO(),
    )
    assert sorted(p.name for p in (tmp_path / "data").iterdir()) == [
        "dev.csv",
        "dev.jsonl",
        "test.csv",
        "test.jsonl",
        "train.csv",
        "train.jsonl",
    ]
    assert "checksums.txt" in out.getvalue()
    with pytest.raises(CommandError, match="unknown format"):
        call_command(
            "export_release",
            project.slug,
            "1",
            "--out",
            str(tmp_path),
            "--format",
            "xlsx",
            stdout=io.StringIO(),
            stderr=io.StringIO(),
        )
    with pytest.raises(CommandError, match="has no release v9"):
        call_command(
            "export_release",
            project.slug,
            "v9",
            "--out",
            str(tmp_path),
            stdout=io.StringIO(),
            stderr=io.StringIO(),
        )


def test_the_card_is_written_by_its_template(project, gold):
    """The card's prose and layout live in a template a writer can read and change, not in code."""
    from django.test.signals import template_rendered

    from evaluation.releases.card import render_card

    release = release_cut(project=project)
    names = []

    def rendered(sender, template, context, **kwargs):
        names.append(template.name)

    template_rendered.connect(rendered)
    try:
        card = render_card(release, release.counts)
    finally:
        template_rendered.disconnect(rendered)
    assert "evaluation/release_card/card.md" in names
    assert card == release.card, "the card stored at the cut is the one the template writes"
