"""Bulk actions on many items run in the background (annotation.item_actions): the page confirms, a worker
decides the items through the same service, and a page follows its progress live; small selections stay
immediate. The API's bulk decision is the same service: 202 and the run's address for many items."""

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from annotation import item_actions
from annotation.models import BulkRun, CurationDecision, Item
from annotation.tasks import bulk_run_task
from core.background import sweep_stale
from tests.factories import ItemFactory, api_token_key

pytestmark = pytest.mark.django_db

MANY = 6


@pytest.fixture(autouse=True)
def background_from_five(monkeypatch):
    """The threshold is a few hundred items; five keeps these tests small and says the same."""
    monkeypatch.setattr(item_actions, "IN_BACKGROUND_FROM", 5)


@pytest.fixture
def in_review(project):
    return ItemFactory.create_batch(MANY, project=project, status=Item.Status.IN_REVIEW)


def bulk_url(project):
    return reverse("annotation:items_bulk", args=[project.slug])


def test_a_bulk_decision_on_many_items_is_done_by_a_worker_and_followed_live(
    client_for, curator, project, in_review, django_capture_on_commit_callbacks
):
    client = client_for(curator)
    data = {"action": "approve", "item": [item.pk for item in in_review], "confirm": "1", "note": ""}
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = client.post(bulk_url(project), data)
    run = BulkRun.objects.get()
    assert response.status_code == 302
    assert response["Location"] == reverse("annotation:items_bulk_run", args=[project.slug, run.pk])
    assert len(callbacks) == 1, "the run is handed to a worker once it is committed"
    assert not Item.objects.filter(status=Item.Status.APPROVED).exists(), "the request decided nothing itself"
    assert (run.status, run.total, run.done) == (BulkRun.Status.QUEUED, MANY, 0)

    page = client.get(response["Location"])
    assert page.status_code == 200
    body = page.content.decode()
    assert "0 of 6 items done" in body
    assert 'hx-trigger="every 1s"' in body, "the page polls while the work runs"

    bulk_run_task(run.pk)  # what the worker runs

    assert Item.objects.filter(status=Item.Status.APPROVED).count() == MANY
    decisions = CurationDecision.objects.filter(decision="approve")
    assert set(decisions.values_list("curator__username", flat=True)) == {"curator"}, "decided in their name"
    poll = client.get(response["Location"], headers={"HX-Request": "true"})
    assert poll.status_code == 286, "the poll stops once the run is over"
    assert "6 of 6 items done" in poll.content.decode()
    assert "6 items decided." in poll.content.decode()


def test_a_small_selection_is_still_decided_in_the_request(client_for, curator, project, in_review):
    chosen = in_review[:4]
    data = {"action": "reject", "item": [item.pk for item in chosen], "confirm": "1"}
    response = client_for(curator).post(bulk_url(project), data)
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("annotation:items", args=[project.slug]))
    assert Item.objects.filter(status=Item.Status.REJECTED).count() == 4
    assert not BulkRun.objects.exists()


def test_the_worker_writes_its_progress_as_it_goes(project, curator, in_review, monkeypatch):
    monkeypatch.setattr(item_actions, "PROGRESS_EVERY_SECONDS", 0)
    outcome = item_actions.bulk_perform(
        project=project,
        user=curator,
        action_key="approve",
        chosen=Item.objects.filter(project=project),
        values={"note": "Revisados em lote."},
    )
    seen = []
    item_close = item_actions.item_close

    def closing(**kwargs):
        seen.append(BulkRun.objects.values_list("done", flat=True).get(pk=outcome.run.pk))
        return item_close(**kwargs)

    monkeypatch.setattr(item_actions, "item_close", closing)
    run = item_actions.bulk_run_execute(run_id=outcome.run.pk)
    assert seen == list(range(MANY)), "each item's progress is on the run before the next one"
    assert (run.status, run.done, run.message) == (BulkRun.Status.DONE, MANY, "6 items decided.")
    assert CurationDecision.objects.filter(note="Revisados em lote.").count() == MANY


def test_a_run_whose_worker_died_fails_with_a_reason_and_the_page_stops_polling(
    client_for, curator, project, settings
):
    run = BulkRun.objects.create(
        project=project,
        created_by=curator,
        action="approve",
        item_ids=[1, 2],
        total=2,
        status=BulkRun.Status.RUNNING,
        owner="gone",
        heartbeat_at=timezone.now() - timedelta(seconds=settings.GENERATION_STALE_SECONDS + 5),
    )
    acted = sweep_stale()
    run.refresh_from_db()
    assert acted["bulk actions failed"] == [run.pk]
    assert run.status == BulkRun.Status.FAILED
    assert "run the action again for the rest" in run.error
    poll = client_for(curator).get(
        reverse("annotation:items_bulk_run", args=[project.slug, run.pk]), headers={"HX-Request": "true"}
    )
    assert poll.status_code == 286
    assert "run the action again for the rest" in poll.content.decode()


def test_the_api_bulk_decision_on_many_items_answers_202_with_the_run_to_follow(
    client, curator, project, in_review, django_capture_on_commit_callbacks
):
    headers = {"Authorization": f"Token {api_token_key(curator)}"}
    body = {"decision": "reject", "note": "", "item_ids": [item.pk for item in in_review]}
    with django_capture_on_commit_callbacks(execute=False):
        response = client.post(
            f"/api/v1/projects/{project.slug}/decisions/",
            body,
            content_type="application/json",
            headers=headers,
        )
    assert response.status_code == 202, response.content
    run = response.json()["run"]
    assert (run["status"], run["total"], run["done"]) == ("queued", MANY, 0)
    assert not Item.objects.filter(status=Item.Status.REJECTED).exists()

    bulk_run_task(run["id"])

    followed = client.get(run["url"], headers=headers)
    assert followed.status_code == 200
    assert (followed.json()["status"], followed.json()["done"]) == ("done", MANY)
    assert Item.objects.filter(status=Item.Status.REJECTED).count() == MANY


def test_another_projects_run_is_not_found(client_for, curator, project, owner):
    from annotation.models import Project

    other = Project.objects.create(name="Outro", slug="outro")
    run = BulkRun.objects.create(project=other, created_by=owner, action="approve", total=1)
    response = client_for(curator).get(reverse("annotation:items_bulk_run", args=[project.slug, run.pk]))
    assert response.status_code == 404
