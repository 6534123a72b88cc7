"""``--here`` (generate, evaluate, topics): one entry point claims the work as a worker would and does it in a
thread of its own."""

import pytest
from django.core.management.base import CommandError

from generation.management.progress import run_here


def test_work_that_cannot_be_claimed_is_not_done():
    done = []
    with pytest.raises(CommandError, match="job #7 could not be claimed"):
        run_here(claim=lambda owner: False, execute=done.append, name="job #7")
    assert done == []


def test_claimed_work_is_done_in_a_thread_with_the_owner_that_claimed_it(caplog):
    claimed, done = [], []
    thread = run_here(claim=lambda owner: claimed.append(owner) or True, execute=done.append, name="run #3")
    thread.join(timeout=10)
    assert thread.name == "run #3"
    assert done == claimed, "the owner token of the claim does the work"


def test_an_error_that_escapes_the_work_is_logged_not_lost(caplog):
    def fail(owner):
        raise RuntimeError("broken")

    run_here(claim=lambda owner: True, execute=fail, name="topic run #2").join(timeout=10)
    assert "topic run #2 failed" in caplog.text
