"""The job page in headless Chromium: a live progress bar that stops polling, cancelling, marked output."""

import os
import shutil
import time

import pytest
from django.db import connections

from annotation.models import Item
from generation.models import GenerationJob
from tests.factories import PASSWORD, ItemFactory
from tests.workers import CeleryWorker

pytestmark = [pytest.mark.browser, pytest.mark.services]
CHROMIUM = os.environ.get("CHROMIUM_PATH") or shutil.which("chromium")
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture
def browser(monkeypatch):
    if not CHROMIUM:
        pytest.skip("Chromium is not installed (Debian package chromium)")
    from playwright.sync_api import sync_playwright

    # Playwright's sync API runs an event loop in this thread; the ORM calls of the test are still synchronous.
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield browser
        browser.close()
        # With Playwright's loop in this thread, the test's queries ran on a connection of their own.
        connections.close_all()


@pytest.fixture
def worker(transactional_db, tmp_path, api_key):
    worker = CeleryWorker(log_path=tmp_path / "worker.log", extra_env={"GENERATION_HEARTBEAT_SECONDS": "0.3"})
    worker.start()
    yield worker
    worker.stop()


def signed_in(browser, live_server, user):
    page = browser.new_page()
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("input[name=username]", user.username)
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit], input[type=submit]")
    page.wait_for_url(f"{live_server.url}/")
    return page


def test_a_job_started_in_the_page_shows_live_progress_and_stops_polling_when_done(
    browser, live_server, worker, project, curator, endpoint, fake_llm
):
    fake_llm.latency = 0.3
    endpoint.max_concurrency = 2
    endpoint.save()
    for _ in range(24):
        ItemFactory(project=project, status=Item.Status.PENDING, round=0, reference_answer="")
    page = signed_in(browser, live_server, curator)
    page.goto(f"{live_server.url}/p/{project.slug}/")
    page.click("text=Generation")
    page.select_option("#id_answer-endpoint", str(endpoint.pk))
    page.click("#start-answers button[type=submit]")
    page.wait_for_url("**/jobs/*/")
    job = GenerationJob.objects.get()

    polls = []
    page.on(
        "request",
        lambda request: polls.append(time.monotonic()) if f"/jobs/{job.pk}/" in request.url else None,
    )
    widths = set()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and page.inner_text("#job-status") != "Succeeded":
        widths.add(page.get_attribute("#job-progress .progress > span", "style"))
        page.wait_for_timeout(250)
    assert page.inner_text("#job-status") == "Succeeded"
    assert len(widths) >= 3  # the bar moved while the job ran
    assert page.inner_text("#job-done") == "24"
    finished = time.monotonic()
    page.wait_for_timeout(2500)
    assert not [at for at in polls if at > finished + 0.5]  # the 286 stopped the polling

    page.click("#job-calls a >> nth=0")
    page.wait_for_url("**/generation/calls/*/")
    assert "Attempt 1: ok" in page.inner_text("#call-attempts")
    assert "Você responde perguntas" in page.inner_text("#call-prompt")


def test_the_cancel_button_stops_a_running_job(
    browser, live_server, worker, project, curator, endpoint, fake_llm
):
    from generation.services import job_create

    fake_llm.latency = 0.3
    endpoint.max_concurrency = 1
    endpoint.save()
    items = [
        ItemFactory(project=project, status=Item.Status.PENDING, round=0, reference_answer="")
        for _ in range(40)
    ]
    job = job_create(project=project, kind="answer", endpoint=endpoint, item_ids=[i.pk for i in items])
    page = signed_in(browser, live_server, curator)
    page.goto(f"{live_server.url}/generation/p/{project.slug}/jobs/{job.pk}/")
    page.wait_for_function(
        "() => document.querySelector('#job-done').textContent.trim() !== '0'", timeout=30000
    )

    page.click("#job-cancel")

    page.wait_for_function(
        "() => document.querySelector('#job-status').textContent.trim() === 'Cancelled'", timeout=15000
    )
    job.refresh_from_db()
    assert job.status == GenerationJob.Status.CANCELLED and job.done < 40
    made = len(fake_llm.requests)
    page.wait_for_timeout(1000)
    assert len(fake_llm.requests) == made
