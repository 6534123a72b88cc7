"""The annotator models on every door, on the demo: review page, agreement page, dashboard, API, release card."""

import re

import pytest
from django.urls import reverse
from django.utils import translation

from annotation.demo import demo_load
from annotation.models import Item
from evaluation.quality.selectors import item_estimates, project_quality
from evaluation.services import release_cut

pytestmark = pytest.mark.django_db


@pytest.fixture
def demo(client):
    project = demo_load().project
    assert client.login(username="curator", password="curator")
    return project


def least_competent(project, key):
    quality = project_quality(project)
    question = next(q for q in quality.questions if q.key == key)
    return question.annotator_rows(quality.names, "dawid_skene")[0]["annotator"]


def test_the_models_find_the_careless_rater_of_the_demo(demo):
    assert least_competent(demo, "causal_class") == "careless"


def test_every_method_finds_the_careless_rater_least_competent_and_mace_the_likeliest_spammer(demo):
    quality = project_quality(demo)
    question = next(q for q in quality.questions if q.key == "causal_class")
    careless = next(a for a, name in quality.names.items() if name == "careless")
    for method in ("majority", "dawid_skene", "mace"):
        competence = question.methods[method].competence
        assert min(competence, key=lambda a: competence[a].value) == careless, method
    spam = question.methods["mace"].competence
    assert max(spam, key=lambda a: spam[a].spam) == careless


def test_the_agreement_page_shows_each_annotators_competence_with_its_interval(client, demo):
    body = client.get(reverse("evaluation:agreement", args=[demo.slug])).content.decode()
    assert 'id="annotator-competence"' in body
    assert "careless" in body
    assert "Dawid–Skene" in body and "MACE" in body


def test_the_review_page_shows_the_majority_and_the_models_label_with_its_probability(client, demo):
    item = Item.objects.filter(project=demo, round_judged__gte=2, status=Item.Status.IN_REVIEW).first()
    body = client.get(reverse("annotation:item_review", args=[demo.slug, item.pk])).content.decode()
    assert 'id="label-estimates"' in body
    assert "Aggregated labels" in body and "Probability" in body


def test_the_review_page_shows_each_annotator_models_label_even_when_the_majority_proposes(client, demo):
    assert demo.aggregation == "majority"
    item = Item.objects.filter(project=demo, round_judged__gte=2, status=Item.Status.IN_REVIEW).first()
    body = client.get(reverse("annotation:item_review", args=[demo.slug, item.pk])).content.decode()
    table = body[body.index('id="label-estimates"') :]
    table = table[: table.index("</table>")]
    causal_class = next(
        e for e in item_estimates(project=demo, items=[item])[item.pk] if e["source"] == "causal_class"
    )
    for model in causal_class["models"]:
        assert f"({model['name']})" in table, model["method"]
        assert f"{round(model['probability'] * 100)}%" in table, model["method"]
    assert {model["method"] for model in causal_class["models"]} == {"dawid_skene", "mace"}


def test_the_dashboard_names_the_least_competent_annotator(client, demo):
    body = client.get(reverse("annotation:dashboard", args=[demo.slug])).content.decode()
    assert 'id="label-quality"' in body
    assert "careless" in body


def test_the_api_gives_labels_probabilities_and_competence(client, demo):
    response = client.get(f"/api/v1/projects/{demo.slug}/quality/")
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["aggregation"] == "majority"
    question = next(q for q in body["questions"] if q["key"] == "causal_class")
    label = question["labels"][0]
    assert set(label) >= {"item", "majority", "dawid_skene", "mace"}
    assert 0 <= label["dawid_skene"]["probability"] <= 1
    careless = next(a for a in question["annotators"] if a["annotator"] == "careless")
    assert careless["competence"]["dawid_skene"]["low"] <= careless["competence"]["dawid_skene"]["value"]


def test_an_annotator_cannot_read_the_quality_api(client, demo):
    client.logout()
    assert client.login(username="annotator1", password="annotator1")
    assert client.get(f"/api/v1/projects/{demo.slug}/quality/").status_code == 403


def test_the_release_card_says_which_aggregation_proposed_the_gold_labels(demo):
    demo.aggregation = "dawid_skene"
    demo.save(update_fields=["aggregation"])
    release = release_cut(project=demo)
    assert "## Label aggregation" in release.card
    assert "proposed by **Dawid–Skene**" in release.card
    assert release.counts["label_aggregation"]["method"] == "dawid_skene"


def test_the_agreement_page_shows_each_demo_annotators_accuracy_on_control_items_with_its_interval(
    client, demo
):
    assert demo.control_rate > 0
    assert Item.objects.filter(project=demo, control_answers__isnull=False).count() >= 3
    with translation.override("en"):
        name = str(project_quality(demo).questions[1].name)
    body = client.get(
        reverse("evaluation:agreement", args=[demo.slug]), HTTP_ACCEPT_LANGUAGE="en"
    ).content.decode()
    section = body[body.index('id="annotator-competence"') :]
    table = section[section.index(f"<h3>{name}</h3>") :]
    table = table[: table.index("</table>")]
    accuracy = re.compile(r"[01]\.\d\d <span class=\"muted\">\(\d+/\d+\) \[[01]\.\d\d, [01]\.\d\d\]</span>")
    for annotator in ("annotator1", "annotator2", "annotator3", "careless"):
        row = table[table.index(f'<th scope="row">{annotator}</th>') :]
        cells = re.findall(r'<td class="num">(.*?)</td>', row[: row.index("</tr>")])
        assert accuracy.fullmatch(cells[5]), (annotator, cells)
