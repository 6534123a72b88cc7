"""No anchoring: an annotator does not see the item's current class (or any field they are asked to judge)
before they judge it, on the item page or through the API; afterwards they do, curators always do, and a project
can show it (``design_settings["show_judged_fields"]``)."""

import pytest
from django.urls import reverse

from annotation.demo import demo_load
from annotation.models import Assignment, Membership
from annotation.queue import assignment_next
from tests.annotation.helpers import judge, judgment_post
from tests.factories import ItemFactory, OptionFactory, UserFactory, api_token_key

pytestmark = pytest.mark.django_db

CLASS_FACT = "<dt>Causal class</dt><dd>counterfactual</dd>"


@pytest.fixture
def item(project):
    return ItemFactory(
        project=project, causal_class="counterfactual", question="Se chovesse, haveria trânsito?"
    )


def page_of(client, project, assignment):
    return client.get(reverse("annotation:assignment", args=[project.slug, assignment.pk])).content.decode()


def test_the_annotator_sees_the_class_only_after_judging(client_for, project, annotator, item):
    assignment = assignment_next(project=project, annotator=annotator)
    client = client_for(annotator)
    assert CLASS_FACT not in page_of(client, project, assignment), "no class shown before the label"
    client.post(
        reverse("annotation:assignment_judge", args=[project.slug, assignment.pk]),
        judgment_post(project, causal_class="interventional"),
    )
    page = page_of(client, project, assignment)
    assert CLASS_FACT in page, "the class is shown after submitting"


def test_curators_always_see_the_class(client_for, project, curator, item):
    page = (
        client_for(curator)
        .get(reverse("annotation:item_review", args=[project.slug, item.pk]))
        .content.decode()
    )
    assert CLASS_FACT in page


def test_a_project_can_show_the_class_before_judging(client_for, project, annotator, item):
    project.design_settings = {"show_judged_fields": True}
    project.save(update_fields=["design_settings"])
    assignment = assignment_next(project=project, annotator=annotator)
    assert CLASS_FACT in page_of(client_for(annotator), project, assignment)


def test_the_api_leaves_the_class_out_until_the_annotator_judged_the_item(
    client, project, annotator, curator, item
):
    headers = {"Authorization": f"Token {api_token_key(annotator)}"}
    taken = client.post(
        f"/api/v1/projects/{project.slug}/assignments/next/",
        {},
        content_type="application/json",
        headers=headers,
    )
    assert taken.status_code == 200
    assert taken.json()["item"]["causal_class"] == "", "the assignment does not give the class away"
    listed = client.get(f"/api/v1/projects/{project.slug}/items/", headers=headers).json()["results"]
    assert [row["causal_class"] for row in listed] == [""], "nor does the items list"
    judge(assignment_next(project=project, annotator=annotator), causal_class="interventional")
    listed = client.get(f"/api/v1/projects/{project.slug}/items/", headers=headers).json()["results"]
    assert [row["causal_class"] for row in listed] == ["counterfactual"], "shown once judged"
    curator_headers = {"Authorization": f"Token {api_token_key(curator)}"}
    other = ItemFactory(project=project, causal_class="associational")
    listed = client.get(f"/api/v1/projects/{project.slug}/items/", headers=curator_headers).json()["results"]
    assert {row["id"]: row["causal_class"] for row in listed}[other.pk] == "associational"


def test_a_causalitycheck_variant_hides_its_role_and_the_correct_option(client):
    project = demo_load("causalitycheck").project
    annotator = UserFactory(username="leitora")
    Membership.objects.create(user=annotator, project=project, role=Membership.Role.ANNOTATOR)
    variant = ItemFactory(
        project=project,
        causal_class="invalid_chain",
        metadata={"cell": "PU-PJ", "task": "pj", "role": "corrupted", "seed": "s1", "sibling_key": "k"},
    )
    original = ItemFactory(
        project=project,
        causal_class="B",
        metadata={"cell": "OR-OP", "task": "op", "role": "original", "seed": "s1"},
    )
    OptionFactory(item=original, text="Opção certa", role="correct", rationale="é a certa", position=1)
    assignment = Assignment.objects.create(item=variant, annotator=annotator, round=1)
    client.force_login(annotator)
    page = page_of(client, project, assignment)
    assert "Checklist" in page, "the design's partial is there"
    assert "Corrupted chain" not in page, "the variant's role gives its label away"
    options = client.get(reverse("annotation:item_part", args=[project.slug, original.pk, "options"]))
    assert "é a certa" not in options.content.decode()
    assert "role-correct" not in options.content.decode()

    headers = {"Authorization": f"Token {api_token_key(annotator)}"}
    rows = client.get(f"/api/v1/projects/{project.slug}/items/?page_size=1000", headers=headers).json()[
        "results"
    ]
    rows = {row["id"]: row for row in rows}
    assert (rows[variant.pk]["causal_class"], rows[original.pk]["causal_class"]) == ("", "")
    assert "role" not in rows[variant.pk]["metadata"]
    assert [option["role"] for option in rows[original.pk]["options"]] == [""]
