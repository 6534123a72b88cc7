"""In headless Chromium: a curator starts a run from the release page, watches it in the worker, reads the report."""

import re

import pytest

from tests.evaluation.runs import mc_items, release_of
from tests.evaluation.test_browser import chromium, sign_in  # noqa: F401 - the fixture, used by name
from tests.fake_llm import Reply

pytestmark = [pytest.mark.browser, pytest.mark.services]


@pytest.fixture
def released(transactional_db, project, endpoint, fake_llm):
    mc_items(project, 9)

    def responder(received):
        schema = received.body["response_format"]["json_schema"]["schema"]
        reasoning = {"reasoning": "Passo a passo."} if "reasoning" in schema["properties"] else {}
        return Reply.json({**reasoning, "answer": "A"})

    fake_llm.responder = responder
    return release_of(project)


def test_a_curator_starts_a_run_from_the_release_page_and_reads_its_report(
    worker, live_server, released, curator, chromium
):  # noqa: F811
    project = released.project
    page = chromium.new_page()
    sign_in(page, live_server, "curator")
    page.goto(f"{live_server.url}/evaluation/p/{project.slug}/releases/{released.version}/")
    page.click(f"a[href$='/runs/?release={released.version}#new-run']")
    page.check("input[name=endpoints]")
    page.check("input[name=conditions][value=chain-of-thought]")
    page.click("#new-run button.primary")
    page.wait_for_url(re.compile(r"/runs/\d+/"))  # the form's #new-run anchor may follow the redirect
    page.wait_for_selector("#table-accuracy svg.plot", timeout=90_000)  # polled until done, then reloaded
    assert page.locator(".badge.status-succeeded").count() == 1
    assert page.locator("#table-errors").count() == 1 and page.locator("#table-cells svg").count() == 2
    page.screenshot(path=str(worker.log_path.parent / "run.png"), full_page=True)
    with page.expect_download() as download:
        page.click("#table-accuracy a[download]")
    assert download.value.suggested_filename.endswith("-accuracy.csv")
