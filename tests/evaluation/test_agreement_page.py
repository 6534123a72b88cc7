"""The project's agreement: per round, per criterion, per causal class and by any metadata field."""

import pytest
from django.urls import reverse

from annotation.models import Item
from evaluation.selectors import project_agreement
from tests.evaluation.helpers import judge
from tests.factories import ItemFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def judged(project, annotators):
    """Ten items in round 1 judged by all three annotators, two of them again in round 2 by two annotators."""
    items = []
    for index in range(10):
        item = ItemFactory(
            project=project,
            causal_class=["associational", "counterfactual"][index % 2],
            metadata={"task": f"t{index % 3}"},
            round=1,
        )
        for position, annotator in enumerate(annotators):
            judge(
                item,
                annotator,
                vote="accept" if (index + position) % 4 else "reject",
                ratings={
                    "adherence": 1 + (index + position) % 5,
                    "fluency": 5,
                    "coherence": 3 + index % 2,
                    "relevance": 4,
                },
            )
        items.append(item)
    for item in items[:2]:
        Item.objects.filter(pk=item.pk).update(round=2)
        for annotator in annotators[:2]:
            judge(
                item,
                annotator,
                round=2,
                vote="accept",
                ratings={"adherence": 2, "fluency": 5, "coherence": 3, "relevance": 4},
            )
    return items


def test_a_unit_is_an_item_in_one_round(project, judged):
    overall = project_agreement(project, bootstrap=None)[0]
    vote = overall.rows[0].summary
    assert overall.n_items == 10 and overall.n_judgments == 34
    assert vote.n_units == 12 and vote.n_raters == 3
    only_round_2 = project_agreement(project, round=2, bootstrap=None)[0]
    assert only_round_2.n_judgments == 4 and only_round_2.rows[0].summary.n_units == 2


def test_every_criterion_has_its_own_row_and_level(project, judged):
    rows = project_agreement(project, bootstrap=None)[0].rows
    assert [row.criterion.key for row in rows] == [
        "vote",
        "causal_class",
        "rating:adherence",
        "rating:fluency",
        "rating:coherence",
        "rating:relevance",
    ]
    assert [row.criterion.level for row in rows] == ["nominal", "nominal"] + ["ordinal"] * 4
    fluency = rows[3].summary
    assert fluency.krippendorff.value is None and "“5”" in fluency.krippendorff.note


def test_breakdowns_by_class_and_by_metadata(project, judged):
    by_class = project_agreement(project, by="causal_class", bootstrap=None)
    assert [section.key for section in by_class] == ["", "associational", "counterfactual"]
    assert sum(section.n_judgments for section in by_class[1:]) == by_class[0].n_judgments
    by_task = project_agreement(project, by="meta:task", bootstrap=None)
    assert [section.key for section in by_task[1:]] == ["t0", "t1", "t2"]


def test_the_breakdowns_list_the_metadata_keys_of_judged_items_only(project, judged, annotators):
    """The database lists the keys (json_each / jsonb_object_keys); the Python scan of the metadata gives the same."""
    from evaluation.selectors import agreement as agreement_selectors

    ItemFactory(project=project, metadata={"unjudged_key": 1})  # nobody judged it
    ItemFactory(project=project, metadata=["a", "list"])  # not an object: no keys
    odd = ItemFactory(project=project, metadata={"stage": "draft", "nested": {"inner": 1}})
    judge(odd, annotators[0], ratings={"adherence": 3, "fluency": 3, "coherence": 3, "relevance": 3})
    listed = agreement_selectors._judged_metadata_keys(project)
    assert listed == {"task", "stage", "nested"}
    options = [key for key, _label in agreement_selectors.agreement_breakdowns(project)]
    assert [key for key in options if key.startswith("meta:")] == ["meta:nested", "meta:stage", "meta:task"]
    scanned = {
        key
        for metadata in Item.objects.filter(project=project, judgments__isnull=False).values_list(
            "metadata", flat=True
        )
        if isinstance(metadata, dict)
        for key in metadata
    }
    assert listed == scanned


def test_the_page_shows_tables_intervals_and_a_plot_to_curators(project, judged, client_for, curator):
    url = reverse("evaluation:agreement", args=[project.slug])
    body = client_for(curator).get(url + "?by=causal_class&level=interval").content.decode()
    assert body.count("<svg") == 3 and "Krippendorff" in body
    assert "associational" in body and "counterfactual" in body
    assert "interval" in body and 'class="ci"' in body


def test_the_page_speaks_portuguese(project, judged, client_for, curator):
    client = client_for(curator)
    client.cookies["django_language"] = "pt-br"
    body = client.get(reverse("evaluation:agreement", args=[project.slug])).content.decode()
    assert "Concordância entre anotadores" in body


def test_htmx_requests_get_only_the_results(project, judged, client_for, curator):
    url = reverse("evaluation:agreement", args=[project.slug])
    body = client_for(curator).get(url + "?round=1", headers={"HX-Request": "true"}).content.decode()
    assert body.lstrip().startswith('<div id="agreement-results">') and "<html" not in body


@pytest.mark.parametrize(("who", "status"), [("annotator", 403), ("outsider", 404), ("owner", 200)])
def test_only_curators_and_owners_see_agreement(request, project, judged, client_for, who, status):
    client = client_for(request.getfixturevalue(who))
    assert client.get(reverse("evaluation:agreement", args=[project.slug])).status_code == status


def test_labels_written_by_people_are_escaped_in_the_plot(project, annotators, client_for, curator):
    project.criteria = [{"key": "x", "label": "<script>alert(1)</script>", "min": 1, "max": 3}]
    project.save(update_fields=["criteria"])
    item = ItemFactory(project=project)
    for annotator in annotators:
        judge(item, annotator, ratings={"x": 2})
    body = client_for(curator).get(reverse("evaluation:agreement", args=[project.slug])).content.decode()
    assert "<script>alert(1)</script>" not in body and "&lt;script&gt;" in body


def test_the_metrics_help_page_defines_each_metric_a_report_shows(client_for, curator):
    body = client_for(curator).get(reverse("evaluation:metrics_help")).content.decode()
    for anchor in (
        "accuracy",
        "group-accuracy",
        "errors",
        "cells",
        "tasks",
        "unit-scores",
        "challenges",
        "bertscore",
        "judge-scores",
        "rankings",
        "cohen",
        "fleiss",
        "krippendorff",
        "intervals",
        "pair-labels",
    ):
        assert f'id="{anchor}"' in body, anchor
    assert "Table 1" in body and "Table 2" in body and "Table 5" in body
