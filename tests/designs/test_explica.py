"""The ExpliCa design: generated items, exactly 15 raters per item, the aggregation rule, alpha, release, export.

The expected labels below were worked out by hand from designs/explica/data/explica.json
(mean rating of each connective per pair and order; the highest wins; ex-05 and ex-06 have no mean
above 6 and an overall mean below 5):

    pair   order  best (mean)        label     relation order  direction
    ex-01  ab     so (8.8)           causal    iconic          a_to_b
    ex-01  ba     because (8.2667)   causal    anti-iconic     a_to_b
    ex-02  ab     because (8.5333)   causal    anti-iconic     b_to_a
    ex-02  ba     so (8.6)           causal    iconic          b_to_a
    ex-03  ab     then (7.6)         temporal  iconic          a_to_b
    ex-03  ba     after (8.1333)     temporal  anti-iconic     a_to_b
    ex-04  ab     after (8.0667)     temporal  anti-iconic     b_to_a
    ex-04  ba     then (8.1333)      temporal  iconic          b_to_a
    ex-05  ab/ba  then (4.4667/3.7333), overall 3.15/2.9167        unrelated
    ex-06  ab/ba  then (4.3333/4.3333), overall 2.95/2.9667        unrelated
"""

import inspect
import io
import json
import zipfile

import krippendorff
import numpy as np
import pytest

from annotation.designs import design_for
from annotation.judging import judgment_submit, judgment_validate
from annotation.models import Item, ItemGroup, Judgment, Membership, Project
from annotation.queue import assignment_next
from designs.explica.aggregation import explica_aggregate, explica_tie_resolve
from designs.explica.design import (
    DesignSettingsError,
    connectives_of,
    example_pairs_load,
    explica_pair_add,
    read_example,
)
from evaluation.releases.export import zip_stream
from evaluation.selectors.agreement import project_agreement
from evaluation.services import release_cut
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

EXPECTED = {
    ("ex-01", "ab"): ("causal", "so", "iconic", "a_to_b", 8.8),
    ("ex-01", "ba"): ("causal", "because", "anti-iconic", "a_to_b", 8.2667),
    ("ex-02", "ab"): ("causal", "because", "anti-iconic", "b_to_a", 8.5333),
    ("ex-02", "ba"): ("causal", "so", "iconic", "b_to_a", 8.6),
    ("ex-03", "ab"): ("temporal", "then", "iconic", "a_to_b", 7.6),
    ("ex-03", "ba"): ("temporal", "after", "anti-iconic", "a_to_b", 8.1333),
    ("ex-04", "ab"): ("temporal", "after", "anti-iconic", "b_to_a", 8.0667),
    ("ex-04", "ba"): ("temporal", "then", "iconic", "b_to_a", 8.1333),
    ("ex-05", "ab"): ("unrelated", "", "", "", 4.4667),
    ("ex-05", "ba"): ("unrelated", "", "", "", 3.7333),
    ("ex-06", "ab"): ("unrelated", "", "", "", 4.3333),
    ("ex-06", "ba"): ("unrelated", "", "", "", 4.3333),
}


def rate(assignment, rating: int):
    """A rater's judgment: the rating and an accept vote. ExpliCa asks raters for no class label
    (``judgment_labels`` is empty); a platform whose judgments all carry a label gets the item's own."""
    item = assignment.item
    asks_for_label = "labels" not in inspect.signature(judgment_validate).parameters or bool(
        design_for(item.project).judgment_labels(item)
    )
    return judgment_submit(
        assignment=assignment,
        ratings={"acceptability": rating},
        vote="accept",
        causal_class=item.causal_class if asks_for_label else "",
    )


def explica_project(slug="explica", **overrides) -> Project:
    defaults = design_for("explica").project_defaults()
    return Project.objects.create(name="ExpliCa", slug=slug, design="explica", **{**defaults, **overrides})


@pytest.fixture
def example():
    return read_example()


def test_a_new_explica_project_rates_acceptability_1_to_10_by_15_raters():
    project = explica_project()
    assert project.answer_format == "rating" and project.overlap == 15
    assert project.criteria == [
        {"key": "acceptability", "label": "Acceptability of the connective", "min": 1, "max": 10}
    ]
    assert [c["word"] for c in connectives_of(project)] == ["then", "after", "so", "because"]
    assert project.design_settings["unrelated_rule"] == {"best_mean_above": 6, "overall_mean_below": 5}


def test_the_eight_items_of_each_pair_are_generated_exactly_as_the_example_writes_them(example):
    project = explica_project()
    groups = example_pairs_load(project, example)
    assert len(groups) == 6 and {g.kind for g in groups} == {"pair"}
    items = {item.external_id: item for item in Item.objects.filter(project=project)}
    assert len(items) == 48
    for row in example["ratings"]:
        item = items[f"{row['pair_id']}-{row['connective']}-{row['order']}"]
        assert item.question == row["text"]
        assert item.status == Item.Status.IN_REVIEW and item.round == 1
    so_ab = items["ex-01-so-ab"]
    assert so_ab.causal_class == "causal"
    assert so_ab.metadata["type"] == "causal" and so_ab.metadata["order"] == "iconic"
    assert so_ab.metadata["item_order"] == "ab" and so_ab.metadata["direction"] == "a_to_b"


def test_an_edited_connective_table_changes_the_generated_items():
    project = explica_project(
        language="en",
        design_settings={
            "connectives": [
                {
                    "word": "so",
                    "type": "causal",
                    "order": "iconic",
                    "templates": {"en": "{first}; therefore {second}."},
                },
                {
                    "word": "before",
                    "type": "temporal",
                    "order": "iconic",
                    "templates": {"en": "{first} before {second}."},
                },
            ]
        },
    )
    group = explica_pair_add(
        project=project, sentence_a="Ann dropped the glass.", sentence_b="The glass broke.", external_id="p1"
    )
    texts = list(group.items.order_by("position_in_group").values_list("question", flat=True))
    assert texts == [
        "Ann dropped the glass; therefore the glass broke.",
        "The glass broke; therefore Ann dropped the glass.",
        "Ann dropped the glass before the glass broke.",
        "The glass broke before Ann dropped the glass.",
    ]


@pytest.mark.parametrize(
    "table, problem",
    [
        (
            [
                {
                    "word": "so",
                    "type": "causal",
                    "order": "sideways",
                    "templates": {"en": "{first} so {second}"},
                }
            ],
            "order",
        ),
        (
            [{"word": "so", "type": "causal", "order": "iconic", "templates": {"en": "{first} so"}}],
            "{second}",
        ),
        (
            [
                {
                    "word": "so",
                    "type": "causal",
                    "order": "iconic",
                    "templates": {"en": "{first} so {second}"},
                },
                {
                    "word": "so",
                    "type": "temporal",
                    "order": "iconic",
                    "templates": {"en": "{first} so {second}"},
                },
            ],
            "repeated",
        ),
    ],
)
def test_a_broken_connective_table_is_refused_naming_the_entry(table, problem):
    project = explica_project(language="en", design_settings={"connectives": table})
    with pytest.raises(DesignSettingsError, match="connectives") as raised:
        explica_pair_add(project=project, sentence_a="A.", sentence_b="B.")
    assert problem in str(raised.value)
    assert not ItemGroup.objects.filter(project=project).exists()


def test_the_example_goes_through_the_whole_pipeline(example, curator):
    # creation
    project = explica_project()
    Membership.objects.create(project=project, user=curator, role=Membership.Role.CURATOR)
    example_pairs_load(project, example)
    ratings = {
        (row["pair_id"], row["connective"], row["order"]): row["ratings"] for row in example["ratings"]
    }
    raters = {name: UserFactory(username=f"rater-{name}") for name in example["raters"]}
    for user in raters.values():
        Membership.objects.create(project=project, user=user, role=Membership.Role.ANNOTATOR)

    # annotation: each rater asks the queue for work until nothing is left, and rates what they get
    for name, user in raters.items():
        while (assignment := assignment_next(project=project, annotator=user)) is not None:
            meta = assignment.item.metadata
            pair = assignment.item.group.external_id
            rating = ratings[(pair, meta["connective"], meta["item_order"])][name]
            rate(assignment, rating)
    late = UserFactory(username="rater-16")
    Membership.objects.create(project=project, user=late, role=Membership.Role.ANNOTATOR)
    assert assignment_next(project=project, annotator=late) is None  # every item has its 15 raters
    per_item = {item.pk: item.judgments.count() for item in Item.objects.filter(project=project)}
    assert set(per_item.values()) == {15} and len(per_item) == 48

    # aggregation
    report = explica_aggregate(project=project, curator=curator)
    assert len(report.labelled) == 6 and report.ties == [] and report.incomplete == {}
    assert report.approved_items == 48
    assert Item.objects.filter(project=project, status=Item.Status.APPROVED).count() == 48
    for group in ItemGroup.objects.filter(project=project):
        gold = group.metadata["gold"]
        assert gold["thresholds"] == {"best_mean_above": 6, "overall_mean_below": 5}
        assert "highest mean rating" in gold["rule"] and gold["raters_per_item"] == 15
        for order, label in gold["orders"].items():
            kind, connective, relation_order, direction, best_mean = EXPECTED[(group.external_id, order)]
            assert (label["label"], label["connective"], label["relation_order"], label["direction"]) == (
                kind,
                connective,
                relation_order,
                direction,
            ), (group.external_id, order)
            assert label["best_mean"] == pytest.approx(best_mean, abs=1e-4)
            assert label["decided_by"] == "rule"
            # the example's own expectation agrees with the aggregation
            assert label["label"] == group.metadata["expected"]
            assert label["direction"] == (group.metadata["expected_direction"] or "")
    item = Item.objects.get(project=project, external_id="ex-01-so-ab")
    assert item.metadata["mean_rating"] == pytest.approx(8.8)
    assert (
        item.metadata["gold"]["label"] == "causal"
        and item.metadata["gold"]["thresholds"]["best_mean_above"] == 6
    )

    # agreement: Krippendorff's alpha (interval) on the ratings, as the krippendorff package computes it
    sections = project_agreement(project, rating_level="interval", bootstrap=None)
    row = next(r for r in sections[0].rows if r.criterion.key == "rating:acceptability")
    names = example["raters"]
    matrix = np.array([[r["ratings"][name] for r in example["ratings"]] for name in names], dtype=float)
    expected_alpha = krippendorff.alpha(reliability_data=matrix, level_of_measurement="interval")
    assert row.summary.krippendorff.value == pytest.approx(expected_alpha, abs=1e-9)
    assert row.summary.n_units == 48 and row.summary.n_judgments == 720

    # release and export with ExpliCa's field names
    release = release_cut(project=project)
    release.refresh_from_db()
    assert release.counts["n_items"] == 48 and release.counts["n_groups"] == 6
    design = design_for(project)
    files = {f.path: f for f in design.export_files(release)}
    pairs = list(files["explica/explica_pairs.csv"].rows)
    assert len(pairs) == 12
    first = next(r for r in pairs if r["pair_id"] == "ex-01" and r["order"] == "ab")
    assert first["Sentence_A"].startswith("Tiago deixou") and first["Sentence_B"].startswith(
        "Tiago encontrou"
    )
    assert first["human_preferred_connective"] == "so"
    assert first["human_preferred_connective_desc"] == "causal iconic"
    assert first["rating_iconic_causal"] == pytest.approx(8.8)
    assert first["rating_anticonic_temporal"] == pytest.approx(3.3333)
    assert first["human_preferred_connective_unrel"] == "no" and first["n_ratings"] == 60
    reversed_row = next(r for r in pairs if r["pair_id"] == "ex-01" and r["order"] == "ba")
    assert reversed_row["Sentence_A"].startswith("Tiago encontrou")
    assert {r["pair_id"] for r in pairs if r["human_preferred_connective_unrel"] == "yes"} == {
        "ex-05",
        "ex-06",
    }
    assert set(pairs[0]) == set(files["explica/explica_pairs.csv"].fields)
    items = list(files["explica/explica_items.csv"].rows)
    assert len(items) == 48
    row = next(r for r in items if r["item"].startswith("Marcos vestiu o uniforme da escola depois que"))
    assert (row["tested_connective"], row["relation_human"], row["condition_human"]) == (
        "after",
        "temporal",
        "temporal anti-iconic",
    )


def test_a_tie_is_reported_and_left_to_a_curator(curator):
    project = explica_project(overlap=2)
    group = explica_pair_add(
        project=project, sentence_a="Ana estudou.", sentence_b="Ana passou.", external_id="t1"
    )
    raters = [UserFactory(username=f"tie-{n}") for n in range(2)]
    scores = {
        ("then", "ab"): 8,
        ("so", "ab"): 8,
        ("after", "ab"): 2,
        ("because", "ab"): 2,
        ("then", "ba"): 2,
        ("so", "ba"): 2,
        ("after", "ba"): 3,
        ("because", "ba"): 9,
    }
    for user in raters:
        Membership.objects.create(project=project, user=user, role=Membership.Role.ANNOTATOR)
        while (assignment := assignment_next(project=project, annotator=user)) is not None:
            meta = assignment.item.metadata
            rate(assignment, scores[meta["connective"], meta["item_order"]])

    report = explica_aggregate(project=project, curator=curator)
    assert report.labelled == [] and len(report.ties) == 1
    group.refresh_from_db()
    tie = group.metadata["gold"]["orders"]["ab"]
    assert tie["label"] == "tie" and tie["best"] == ["then", "so"] and tie["connective"] == ""
    assert group.metadata["gold"]["orders"]["ba"]["connective"] == "because"
    assert not Item.objects.filter(project=project, status=Item.Status.APPROVED).exists()

    with pytest.raises(ValueError, match="not among the tied"):
        explica_tie_resolve(group=group, order="ab", connective="after", curator=curator)
    explica_tie_resolve(group=group, order="ab", connective="so", curator=curator)
    group.refresh_from_db()
    resolved = group.metadata["gold"]["orders"]["ab"]
    assert (resolved["label"], resolved["connective"], resolved["decided_by"]) == ("causal", "so", "curator")
    assert resolved["best"] == ["then", "so"]  # the tie stays on record
    assert Item.objects.filter(project=project, status=Item.Status.APPROVED).count() == 8


def test_pairs_still_short_of_ratings_are_not_labelled(curator):
    project = explica_project(overlap=2)
    explica_pair_add(project=project, sentence_a="Ana estudou.", sentence_b="Ana passou.", external_id="s1")
    user = UserFactory(username="only-one")
    Membership.objects.create(project=project, user=user, role=Membership.Role.ANNOTATOR)
    assignment = assignment_next(project=project, annotator=user)
    rate(assignment, 7)
    report = explica_aggregate(project=project, curator=curator)
    assert report.incomplete == {"s1": 8} and report.labelled == [] and report.ties == []
    assert Judgment.objects.filter(item__project=project).count() == 1


def test_the_demo_example_loads_with_its_ratings_and_gold_labels(curator):
    project = explica_project()
    counts = design_for(project).load_example(project, {"curator": curator})
    assert counts == {"pairs": 6, "items": 48, "raters": 15, "judgments": 720, "labelled": 6, "ties": 0}
    assert Item.objects.filter(project=project, status=Item.Status.APPROVED).count() == 48
    release = release_cut(project=project)
    names = zipfile.ZipFile(io.BytesIO(b"".join(zip_stream(release)))).namelist()
    assert any(name.endswith("train.jsonl") for name in names)


@pytest.fixture
def explica_team(owner, curator, annotators):
    project = explica_project(slug="explica-team", overlap=2)
    Membership.objects.create(project=project, user=owner, role=Membership.Role.OWNER)
    Membership.objects.create(project=project, user=curator, role=Membership.Role.CURATOR)
    for annotator in annotators:
        Membership.objects.create(project=project, user=annotator, role=Membership.Role.ANNOTATOR)
    return project


def test_the_pairs_page_is_for_curators(explica_team, client_for, annotator, outsider, curator, project):
    from django.urls import reverse

    url = reverse("designs:explica", args=[explica_team.slug])
    assert client_for(outsider).get(url).status_code == 404
    assert client_for(annotator).get(url).status_code == 403
    assert client_for(curator).get(reverse("designs:explica", args=[project.slug])).status_code == 404
    page = client_for(curator).get(url)
    assert page.status_code == 200 and 'id="explica-pairs"' in page.content.decode()


def test_pairs_are_uploaded_all_or_nothing(explica_team, client_for, curator):
    """The upload is an import like any other: queued by the page, read by the worker through the common import
    service with the design's reader, reported on the import's page."""
    from annotation.models import ImportBatch
    from tests.designs.published_pages import upload_pairs_and_import

    client = client_for(curator)
    broken = "external_id,sentence_a,sentence_b\np1,Ana estudou.,Ana passou.\np2,Ana caiu.,\n"
    batch, page = upload_pairs_and_import(client, explica_team, "pairs.csv", broken.encode())
    assert batch.status == ImportBatch.Status.FAILED
    assert "row 2" in page
    assert not ItemGroup.objects.filter(project=explica_team).exists()
    good = "external_id,sentence_a,sentence_b\np1,Ana estudou.,Ana passou.\np2,Ana caiu.,Ana se machucou.\n"
    batch, page = upload_pairs_and_import(client, explica_team, "pairs.csv", good.encode())
    assert batch.status == ImportBatch.Status.DONE
    assert batch.funnel["published"]["groups"] == 2
    assert "2 pairs added" in page
    assert ItemGroup.objects.filter(project=explica_team, kind="pair").count() == 2
    assert Item.objects.filter(project=explica_team).count() == 16
    again = b'{"external_id": "p1", "sentence_a": "x.", "sentence_b": "y."}\n'
    batch, page = upload_pairs_and_import(client, explica_team, "pairs.jsonl", again)
    assert batch.status == ImportBatch.Status.FAILED
    assert "already in the project" in page
    assert Item.objects.filter(project=explica_team).count() == 16


def test_the_connective_table_and_rule_are_edited_on_the_page(explica_team, client_for, curator):
    from django.urls import reverse

    client = client_for(curator)
    url = reverse("designs:explica_settings", args=[explica_team.slug])
    table = [
        {"word": "so", "type": "causal", "order": "iconic", "templates": {"pt-BR": "{first}, logo {second}."}}
    ]
    response = client.post(
        url,
        {"connectives": json.dumps(table), "best_mean_above": "oito", "overall_mean_below": "5"},
        follow=True,
    )
    assert "not saved" in response.content.decode() or "não foram salvas" in response.content.decode()
    client.post(url, {"connectives": json.dumps(table), "best_mean_above": "7", "overall_mean_below": "4.5"})
    explica_team.refresh_from_db()
    assert explica_team.design_settings["connectives"] == table
    assert explica_team.design_settings["unrelated_rule"] == {
        "best_mean_above": 7.0,
        "overall_mean_below": 4.5,
    }
    group = explica_pair_add(project=explica_team, sentence_a="Ana estudou.", sentence_b="Ana passou.")
    assert list(group.items.values_list("question", flat=True)) == [
        "Ana estudou, logo Ana passou.",
        "Ana passou, logo Ana estudou.",
    ]
    bad = [{"word": "so", "type": "causal", "order": "iconic", "templates": {"pt-BR": "{first} logo"}}]
    client.post(url, {"connectives": json.dumps(bad), "best_mean_above": "7", "overall_mean_below": "4.5"})
    explica_team.refresh_from_db()
    assert explica_team.design_settings["connectives"] == table


def test_aggregation_and_ties_from_the_page(explica_team, client_for, curator, annotators):
    from django.urls import reverse

    group = explica_pair_add(
        project=explica_team, sentence_a="Ana estudou.", sentence_b="Ana passou.", external_id="t9"
    )
    for user in annotators[:2]:
        while (assignment := assignment_next(project=explica_team, annotator=user)) is not None:
            rating = 8 if assignment.item.metadata["connective"] in ("then", "so") else 2
            rate(assignment, rating)
    client = client_for(curator)
    client.post(reverse("designs:explica_aggregate", args=[explica_team.slug]))
    page = client.get(reverse("designs:explica", args=[explica_team.slug]))
    assert len(page.context["ties"]) == 1 and 'name="connective" value="so"' in page.content.decode()
    for order in ("ab", "ba"):
        client.post(
            reverse("designs:explica_tie", args=[explica_team.slug, group.pk]),
            {"order": order, "connective": "then"},
        )
    group.refresh_from_db()
    assert {label["label"] for label in group.metadata["gold"]["orders"].values()} == {"temporal"}
    assert Item.objects.filter(group=group, status=Item.Status.APPROVED).count() == 8


def test_pairs_keep_the_connectives_they_were_generated_with_when_the_table_changes(curator):
    from designs.explica.design import explica_settings_update

    project = explica_project(overlap=1)
    group = explica_pair_add(
        project=project, sentence_a="Ana estudou.", sentence_b="Ana passou.", external_id="k1"
    )
    explica_settings_update(
        project=project,
        connectives=[
            {
                "word": "so",
                "type": "causal",
                "order": "iconic",
                "templates": {"pt-BR": "{first}, logo {second}."},
            }
        ],
        rule={"best_mean_above": 6, "overall_mean_below": 5},
    )
    user = UserFactory(username="single-rater")
    Membership.objects.create(project=project, user=user, role=Membership.Role.ANNOTATOR)
    while (assignment := assignment_next(project=project, annotator=user)) is not None:
        meta = assignment.item.metadata
        rating = 9 if (meta["connective"], meta["item_order"]) in (("after", "ab"), ("then", "ba")) else 3
        rate(assignment, rating)
    report = explica_aggregate(project=project, curator=curator)
    assert len(report.labelled) == 1
    group.refresh_from_db()
    orders = group.metadata["gold"]["orders"]
    assert (orders["ab"]["connective"], orders["ab"]["label"], orders["ab"]["direction"]) == (
        "after",
        "temporal",
        "b_to_a",
    )
    assert (orders["ba"]["connective"], orders["ba"]["direction"]) == ("then", "b_to_a")


def test_raters_see_the_two_sentences_and_curators_also_the_connective_and_label(explica_team):
    from django.template.loader import render_to_string

    group = explica_pair_add(project=explica_team, sentence_a="Ana estudou.", sentence_b="Ana passou.")
    item = group.items.get(metadata__connective="so", metadata__item_order="ab")
    design = design_for(explica_team)
    explica_team.user_role = "annotator"
    html = render_to_string(design.item_partial, {"item": item, "design": design, "project": explica_team})
    assert "A: Ana estudou.<br>B: Ana passou." in html and "iconic" not in html
    explica_team.user_role = "curator"
    html = render_to_string(design.item_partial, {"item": item, "design": design, "project": explica_team})
    assert "(causal, iconic)" in html


def test_the_project_page_partial_counts_pairs_labels_and_ties(example, curator):
    from django.template.loader import render_to_string

    project = explica_project()
    design = design_for(project)
    design.load_example(project, {"curator": curator})
    context = design.project_context(project)
    assert context["explica"] == {
        "pairs": 6,
        "labelled": 6,
        "ties": 0,
        "labels": [("causal", 4), ("temporal", 4), ("unrelated", 4)],
    }
    html = render_to_string(
        design.project_partial, {"project": project, "design": design, "design_context": context}
    )
    assert 'id="explica-summary"' in html and "unrelated" in html
    assert design.judgment_labels(Item.objects.filter(project=project).first()) == []


def test_the_published_pair_layout_is_imported_one_pair_per_pair_id_with_its_ratings(
    explica_team, curator, client_for
):
    from designs.explica.design import DATA
    from designs.explica.published import PublishedPairsError, published_pairs_import

    data = (DATA / "explica_published_pairs.csv").read_bytes()
    groups = published_pairs_import(project=explica_team, data=data, filename="explica_published_pairs.csv")

    assert [group.external_id for group in groups] == ["P001", "P002", "P003"]
    first = groups[0]
    assert (first.metadata["sentence_a"], first.metadata["sentence_b"]) == (
        "The road was icy",
        "The car skidded",
    )
    assert first.metadata["published_ratings"]["iconic"]["rating_iconic_causal"] == 8.4
    assert first.metadata["published_ratings"]["anti-iconic"]["rating_anticonic_causal"] == 7.9
    assert Item.objects.filter(group=first).count() == 8

    mixed = b"Pair_ID,Sentence_A,Sentence_B\nP9,A chuva caiu,O rio subiu\nP9,O rio subiu,A ponte caiu\n"
    with pytest.raises(PublishedPairsError, match="row 2: pair P9 has other sentences than on row 1"):
        published_pairs_import(project=explica_team, data=mixed, filename="pares.csv")


def test_the_pair_upload_takes_the_published_layout_as_a_spreadsheet(explica_team, curator, client_for):
    import io

    import openpyxl

    book = openpyxl.Workbook()
    sheet = book.active
    sheet.append(["Pair_ID", "Sentence_A", "Sentence_B", "order"])
    sheet.append(["P10", "Ana estudou muito", "Ana passou na prova", "iconic"])
    sheet.append(["P10", "Ana passou na prova", "Ana estudou muito", "anti-iconic"])
    buffer = io.BytesIO()
    book.save(buffer)
    from tests.designs.published_pages import upload_pairs_and_import

    upload_pairs_and_import(client_for(curator), explica_team, "pares.xlsx", buffer.getvalue())

    assert list(ItemGroup.objects.filter(project=explica_team).values_list("external_id", flat=True)) == [
        "P10"
    ]


def test_raters_give_only_the_rating_and_never_edit_the_shared_sentence(
    explica_team, example, client_for, annotators, curator
):
    """ExpliCa's form (the design decides it): the 1–10 acceptability rating, no vote, no class label, and no
    editing of the sentence the other raters read; curators may still correct it."""
    from django.core.exceptions import PermissionDenied
    from django.urls import reverse

    from annotation.models import Judgment
    from annotation.permissions import can_edit_item, get_item_for_editing

    example_pairs_load(explica_team, example)
    rater = annotators[0]
    assignment = assignment_next(project=explica_team, annotator=rater)
    page = client_for(rater).get(reverse("annotation:assignment", args=[explica_team.slug, assignment.pk]))
    html = page.content.decode()
    assert page.status_code == 200
    assert 'name="rating_acceptability"' in html and 'value="10"' in html
    assert 'name="vote"' not in html and 'name="causal_class"' not in html
    response = client_for(rater).post(
        reverse("annotation:assignment_judge", args=[explica_team.slug, assignment.pk]),
        {"rating_acceptability": "10", "comment": ""},
    )
    assert response.status_code == 302, response.content.decode()[:300]
    judgment = Judgment.objects.get(assignment=assignment)
    assert (judgment.ratings, judgment.vote, judgment.causal_class) == ({"acceptability": 10}, "", "")

    held = assignment_next(project=explica_team, annotator=annotators[1])
    assert not can_edit_item(annotators[1], explica_team, held.item)
    with pytest.raises(PermissionDenied):
        get_item_for_editing(annotators[1], explica_team, held.item_id)
    assert can_edit_item(curator, explica_team, held.item)
