"""Control items: approved items with known answers, served unannounced at the project's rate."""

import pytest
from django.core.exceptions import ValidationError

from annotation.control_items import item_mark_control, item_unmark_control
from annotation.models import Item, Judgment
from annotation.queue import assignment_next
from evaluation.quality.selectors import project_quality
from tests.annotation.helpers import judge
from tests.factories import ItemFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def control(project):
    item = ItemFactory(project=project, status=Item.Status.APPROVED, causal_class="interventional")
    Item.objects.filter(pk=item.pk).update(round_assigned=3, round_judged=3)
    return item_mark_control(item=item)


def test_an_approved_item_becomes_a_control_item_with_its_decision_as_the_answer(control):
    assert control.control_answers == {"vote": "accept", "causal_class": "interventional"}


def test_only_an_approved_item_can_be_a_control_item(project):
    with pytest.raises(ValidationError, match="approved"):
        item_mark_control(item=ItemFactory(project=project))


def test_a_known_answer_outside_the_questions_labels_is_refused(project, control):
    with pytest.raises(ValidationError, match="causal_class: choose among"):
        item_mark_control(item=control, answers={"causal_class": "astrology"})
    with pytest.raises(ValidationError, match="not a question"):
        item_mark_control(item=control, answers={"colour": "blue"})


def test_a_control_item_is_served_unannounced_and_leaves_the_item_as_decided(project, annotator, control):
    project.control_rate = 0.5
    project.save()
    ItemFactory(project=project)  # ordinary work waiting
    served = []
    for _ in range(40):
        assignment = assignment_next(project=project, annotator=annotator)
        served.append(assignment.item_id)
        if assignment.item_id == control.pk:
            judge(assignment, vote="accept", causal_class="associational")
            break
        assignment.delete()  # the test hands the ordinary item out again, its slot free
        Item.objects.filter(pk=assignment.item_id).update(round_assigned=0)
    assert control.pk in served, "served at a rate of one in two"
    control.refresh_from_db()
    assert (control.status, control.round_assigned, control.round_judged) == (Item.Status.APPROVED, 3, 3)
    assert Judgment.objects.filter(item=control, annotator=annotator).exists()
    question = next(q for q in project_quality(project).questions if q.key == "causal_class")
    assert question.gold_accuracy[annotator.pk][:2] == (0, 1), "wrong on the one control item answered"
    for _ in range(10):
        again = assignment_next(project=project, annotator=annotator)
        assert again is not None, "the ordinary item is still waiting"
        assert again.item_id != control.pk, "never twice"


def test_without_a_rate_no_control_item_is_served(project, annotator, control):
    for _ in range(10):
        assignment = assignment_next(project=project, annotator=annotator)
        assert assignment is None or assignment.item_id != control.pk


def test_an_unmarked_item_is_no_longer_a_control_item(control):
    assert item_unmark_control(item=control).control_answers is None


def test_a_curator_marks_an_approved_item_as_a_control_item_from_its_review_page(client, project, curator):
    item = ItemFactory(project=project, status=Item.Status.APPROVED)
    client.force_login(curator)
    url = f"/p/{project.slug}/items/{item.pk}/control/"
    response = client.post(url, {"control": "on"})
    assert response.status_code == 302
    item.refresh_from_db()
    assert item.control_answers == {"vote": "accept", "causal_class": "associational"}
    page = client.get(f"/p/{project.slug}/items/{item.pk}/").content.decode()
    assert 'id="control-form"' in page and "Stop using it as a control item" in page
    client.post(url, {"control": "off"})
    item.refresh_from_db()
    assert item.control_answers is None


def test_marking_an_item_in_review_says_why_it_cannot_be_a_control_item(client, project, curator):
    item = ItemFactory(project=project)
    client.force_login(curator)
    response = client.post(f"/p/{project.slug}/items/{item.pk}/control/", {"control": "on"}, follow=True)
    assert "only an approved item can be a control item" in response.content.decode()
    item.refresh_from_db()
    assert item.control_answers is None


def test_the_api_marks_and_unmarks_a_control_item(client, project, curator, annotator):
    item = ItemFactory(project=project, status=Item.Status.APPROVED)
    url = f"/api/v1/projects/{project.slug}/items/{item.pk}/control/"
    client.force_login(annotator)
    assert client.post(url, {}, content_type="application/json").status_code == 403
    client.force_login(curator)
    response = client.post(
        url, {"answers": {"causal_class": "counterfactual"}}, content_type="application/json"
    )
    assert response.status_code == 200, response.content
    assert response.json()["control_answers"] == {"causal_class": "counterfactual"}
    bad = client.post(url, {"answers": {"causal_class": "astrology"}}, content_type="application/json")
    assert bad.status_code == 400
    assert "causal_class: choose among" in bad.content.decode()
    assert client.delete(url).json()["control_answers"] is None


def test_a_causalitycheck_control_item_knows_the_class_of_its_own_task(owner):
    from annotation.designs import design_for
    from annotation.projects import project_create

    project = project_create(
        name="Checklist", slug="checklist-control", design="causalitycheck", created_by=owner
    )
    design_for(project).load_example(project, {})
    item = project.items.filter(metadata__task="aj").first()
    Item.objects.filter(pk=item.pk).update(status=Item.Status.APPROVED)
    marked = item_mark_control(item=item)
    assert marked.control_answers == {"vote": "accept", "causal_class:aj": item.causal_class}
    with pytest.raises(ValidationError, match="not a question asked of this item: causal_class:op"):
        item_mark_control(item=item, answers={"causal_class:op": "A"})
    with pytest.raises(ValidationError, match="causal_class:aj: choose among answerable, unanswerable"):
        item_mark_control(item=item, answers={"causal_class:aj": "correct_and_reliable"})


def test_control_items_marked_with_the_one_class_question_move_to_their_tasks_question(owner):
    import importlib

    from django.apps import apps

    from annotation.designs import design_for
    from annotation.projects import project_create

    migration = importlib.import_module("annotation.migrations.0010_control_answers_per_task")
    project = project_create(
        name="Checklist", slug="checklist-moved", design="causalitycheck", created_by=owner
    )
    design_for(project).load_example(project, {})
    item = project.items.filter(metadata__task="cva").first()
    Item.objects.filter(pk=item.pk).update(
        status=Item.Status.APPROVED, control_answers={"vote": "accept", "causal_class": item.causal_class}
    )
    migration.forwards(apps, None)
    item.refresh_from_db()
    assert item.control_answers == {"vote": "accept", "causal_class:cva": item.causal_class}
    migration.backwards(apps, None)
    item.refresh_from_db()
    assert item.control_answers == {"vote": "accept", "causal_class": item.causal_class}


def test_asking_for_a_question_to_answer_is_never_served_a_control_item(project, annotator, control):
    project.control_rate = 0.5
    project.save()
    waiting = ItemFactory(project=project, status=Item.Status.PENDING, round=0, reference_answer="")
    for _ in range(30):
        assignment = assignment_next(project=project, annotator=annotator, kind="answer")
        assert assignment.item_id == waiting.pk, "a control item is judged, never answered"
        assignment.delete()
        Item.objects.filter(pk=waiting.pk).update(round_assigned=0)
