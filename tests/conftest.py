"""Shared fixtures: the fixed cast of users, a project, and real worker processes.

The cast: an owner, a curator, three annotators and an outsider who belongs to nothing.
Set CAUSALQA_REQUIRE_ALL=1 (CI does) to turn the skips of optional parts (browser, local
models, services) into failures, so nothing is silently left out there.
"""

import os
import shutil
import tempfile
import threading

import pytest

from tests.factories import ProjectFactory, UserFactory
from tests.workers import CeleryWorker

REQUIRE_ALL = os.environ.get("CAUSALQA_REQUIRE_ALL") == "1"


def pytest_runtest_makereport(item, call):
    """In CI a skipped test counts as a failure: everything must run there."""
    if not REQUIRE_ALL or call.excinfo is None or not call.excinfo.errisinstance(pytest.skip.Exception):
        return None
    if item.get_closest_marker("allow_skip"):
        return None
    from _pytest.reports import TestReport

    report = TestReport.from_item_and_call(item, call)
    report.outcome = "failed"
    report.longrepr = f"skipped, but CAUSALQA_REQUIRE_ALL=1 requires it to run: {call.excinfo.value}"
    return report


def pytest_configure(config):
    config.addinivalue_line("markers", "allow_skip: may skip even when CAUSALQA_REQUIRE_ALL=1")
    from django.conf import settings

    # Hashing the cast's passwords with PBKDF2 costs seconds per test; tests need no strength.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    # The releases' zips of this run, in a folder of its own (the worker processes it starts read the variable).
    os.environ["RELEASE_ARCHIVE_DIR"] = settings.RELEASE_ARCHIVE_DIR = tempfile.mkdtemp(
        prefix="release-zips-"
    )


def pytest_unconfigure(config):
    shutil.rmtree(os.environ.get("RELEASE_ARCHIVE_DIR", ""), ignore_errors=True)


@pytest.fixture(autouse=True)
def default_language():
    """Each test starts in the default language: a request in Portuguese leaves it active in the thread."""
    from django.utils import translation

    translation.deactivate()
    yield
    translation.deactivate()


@pytest.fixture(autouse=True)
def checkpoints_finished():
    """An import outside a transaction (a live server's, a transactional test's) leaves the copy of SQLite's log
    to a thread of its own (``wal_checkpoints_aside(wait=False)``): it ends before the next test, which may count
    the threads it starts itself."""
    yield
    from core.db.bulk import CHECKPOINT_THREAD

    for thread in threading.enumerate():
        if thread.name == CHECKPOINT_THREAD:
            thread.join(timeout=30)


@pytest.fixture
def owner(db):
    return UserFactory(username="owner")


@pytest.fixture
def curator(db):
    return UserFactory(username="curator")


@pytest.fixture
def annotators(db):
    return [UserFactory(username=f"annotator{n}") for n in (1, 2, 3)]


@pytest.fixture
def annotator(annotators):
    return annotators[0]


@pytest.fixture
def outsider(db):
    return UserFactory(username="outsider")


@pytest.fixture
def project(owner, curator, annotators):
    """A Causal_QA.PT-style project with the whole cast as members (the outsider excepted)."""
    from annotation.models import Membership

    project = ProjectFactory(slug="causal-qa", name="Causal QA")
    Membership.objects.create(user=owner, project=project, role=Membership.Role.OWNER)
    Membership.objects.create(user=curator, project=project, role=Membership.Role.CURATOR)
    for annotator in annotators:
        Membership.objects.create(user=annotator, project=project, role=Membership.Role.ANNOTATOR)
    return project


@pytest.fixture
def client_for(client):
    """``client_for(user)``: the test client signed in as ``user``."""

    def sign_in(user):
        client.force_login(user)
        return client

    return sign_in


@pytest.fixture
def celery_worker_process(transactional_db, tmp_path):
    """A real Celery worker in its own process, on its own queue, sharing the test database.

    The test must commit what the worker should see, hence ``transactional_db``.
    """
    worker = CeleryWorker(log_path=tmp_path / "worker.log")
    worker.start()
    yield worker
    worker.stop()
