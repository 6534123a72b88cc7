"""Two owners demoting each other at the same moment: one wins, the other is told the project keeps an owner;
never a deadlock (a server error), never a project without an owner."""

import threading

import pytest
from django.core.exceptions import ValidationError
from django.db import connection

from annotation.models import Membership, Project
from annotation.team import membership_remove, membership_update
from tests.factories import UserFactory

TRIALS = 12


def two_owners(number: int):
    project = Project.objects.create(name=f"Corrida {number}", slug=f"corrida-{number}")
    first, second = UserFactory(), UserFactory()
    memberships = [
        Membership.objects.create(project=project, user=user, role=Membership.Role.OWNER)
        for user in (first, second)
    ]
    return project, memberships


def at_once(*actions) -> list:
    """Run each action in its own thread and connection, started together; what each raised (or None)."""
    start = threading.Barrier(len(actions), timeout=10)
    outcomes = [None] * len(actions)

    def run(index, action):
        try:
            start.wait()
            action()
        except Exception as exc:  # noqa: BLE001 - each outcome is asserted by the test
            outcomes[index] = exc
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(index, action)) for index, action in enumerate(actions)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    return outcomes


@pytest.mark.allow_skip
@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(
    connection.vendor != "postgresql", reason="row locks and deadlocks exist on PostgreSQL only"
)
@pytest.mark.parametrize("second_action", ["demote", "remove"])
def test_two_owners_demoting_each_other_at_once_never_deadlock_nor_leave_no_owner(second_action):
    for trial in range(TRIALS):
        project, (first, second) = two_owners(trial)

        def demote_second(first=first, second=second):
            membership_update(membership=second, by=first.user, role=Membership.Role.CURATOR, expertise=[])

        def act_on_first(first=first, second=second):
            if second_action == "demote":
                membership_update(
                    membership=first, by=second.user, role=Membership.Role.CURATOR, expertise=[]
                )
            else:
                membership_remove(membership=first, by=second.user)

        outcomes = at_once(demote_second, act_on_first)
        unexpected = [
            outcome
            for outcome in outcomes
            if outcome is not None and not isinstance(outcome, ValidationError)
        ]
        assert not unexpected, f"trial {trial}: {unexpected!r}"
        assert sum(outcome is None for outcome in outcomes) == 1, f"trial {trial}: {outcomes!r}"
        owners = Membership.objects.filter(project=project, role=Membership.Role.OWNER).count()
        assert owners == 1, f"trial {trial}: {owners} owners"
