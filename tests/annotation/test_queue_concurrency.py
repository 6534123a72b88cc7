"""Annotators asking at the same instant: real threads, each on its own database connection.

On PostgreSQL candidates are locked with FOR UPDATE SKIP LOCKED; on SQLite transactions are
IMMEDIATE and run one after the other. Either way the last slot goes to exactly one of them.
"""

import threading

import pytest
from django.db import connection, transaction

from annotation.models import Assignment, Item, Membership, Project
from annotation.queue import assignment_next
from tests.factories import ItemFactory, UserFactory

pytestmark = pytest.mark.django_db(transaction=True)


def annotators_of(project, n, prefix):
    people = []
    for number in range(n):
        user = UserFactory(username=f"{prefix}{number}")
        Membership.objects.create(user=user, project=project, role=Membership.Role.ANNOTATOR)
        people.append(user)
    return people


def ask_all_at_once(project_id, users):
    """Every user asks for the next item at the same moment; returns {username: item id or None}."""
    barrier = threading.Barrier(len(users))
    results, errors = {}, []

    def ask(user):
        try:
            project = Project.objects.get(pk=project_id)
            barrier.wait(timeout=30)
            assignment = assignment_next(project=project, annotator=user)
            results[user.username] = assignment.item_id if assignment else None
        except Exception as exc:  # noqa: BLE001 - reported by the test below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=ask, args=(user,)) for user in users]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not errors, errors
    return results


@pytest.mark.parametrize("trial", range(5))
def test_two_annotators_asking_for_the_last_slot_get_different_items(trial):
    project = Project.objects.create(name=f"Race {trial}", slug=f"race-{trial}", overlap=3)
    first_two = annotators_of(project, 2, "early")
    contested = ItemFactory(project=project)
    other = ItemFactory(project=project)
    for user in first_two:
        assignment_next(project=project, annotator=user)
    rivals = annotators_of(project, 2, "rival")

    results = ask_all_at_once(project.pk, rivals)

    assert sorted(results.values()) == sorted([contested.pk, other.pk])
    assert Assignment.objects.filter(item=contested).count() == 3
    assert Item.objects.get(pk=contested.pk).round_assigned == 3


@pytest.mark.parametrize("trial", range(5))  # a deadlock between waiting requests showed up about once in ten
def test_many_annotators_at_once_never_exceed_the_overlap(trial):
    project = Project.objects.create(name=f"Crowd {trial}", slug=f"crowd-{trial}", overlap=3)
    items = [ItemFactory(project=project) for _ in range(3)]
    crowd = annotators_of(project, 12, "crowd")

    results = ask_all_at_once(project.pk, crowd)

    handed = [item_id for item_id in results.values() if item_id is not None]
    assert len(handed) == 9 and list(results.values()).count(None) == 3
    for item in items:
        assert Assignment.objects.filter(item=item).count() == 3
        assert Item.objects.get(pk=item.pk).round_assigned == 3


@pytest.mark.parametrize("trial", range(3))
def test_an_adaptive_rounds_extra_judgments_are_never_handed_out_twice_at_once(trial):
    project = Project.objects.create(
        name=f"Adaptive {trial}", slug=f"adaptive-{trial}", overlap=2, overlap_max=4, overlap_threshold=0.9
    )
    unsure, surer = ItemFactory(project=project), ItemFactory(project=project)
    for item, confidence in ((unsure, 0.4), (surer, 0.8)):
        Item.objects.filter(pk=item.pk).update(
            round_assigned=2, round_judged=2, round_wanted=3, round_confidence=confidence
        )
    crowd = annotators_of(project, 3, "extra")

    results = ask_all_at_once(project.pk, crowd)

    assert sorted(results.values(), key=str) == sorted([unsure.pk, surer.pk, None], key=str)
    for item in (unsure, surer):
        assert Item.objects.get(pk=item.pk).round_assigned == 3, "one extra judgment each, as wanted"


@pytest.mark.allow_skip  # SQLite has no row locks to skip; it serialises whole transactions instead (tested above)
@pytest.mark.skipif(
    connection.vendor != "postgresql", reason="row locks with SKIP LOCKED exist on PostgreSQL only"
)
def test_an_item_locked_by_someone_else_is_skipped_without_waiting():
    project = Project.objects.create(name="Locks", slug="locks", overlap=1)
    locked, free = ItemFactory(project=project), ItemFactory(project=project)
    [annotator] = annotators_of(project, 1, "waiting")
    holding = threading.Event()
    release = threading.Event()

    def hold_lock():
        try:
            with transaction.atomic():
                Item.objects.select_for_update().get(pk=locked.pk)
                holding.set()
                release.wait(timeout=30)
        finally:
            connection.close()

    holder = threading.Thread(target=hold_lock)
    holder.start()
    try:
        assert holding.wait(timeout=10)
        assignment = assignment_next(project=project, annotator=annotator)
        assert assignment.item_id == free.pk
    finally:
        release.set()
        holder.join(timeout=30)
