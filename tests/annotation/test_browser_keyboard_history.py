"""In a real browser, by keyboard only: Alt+S skips from inside the answer box, u undoes the skip, [ goes back
through one's own work, and o opens *Change this judgment*, which then takes the same digit keys and Enter."""

import re

import pytest

from annotation.models import Assignment, Judgment
from tests.annotation.browser import browser, screenshot  # noqa: F401 - the fixture
from tests.annotation.test_browser_drafts import open_as
from tests.site.browser_pages import build_studio

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_alt_s_skips_from_the_answer_box_and_u_undoes_the_skip(browser, live_server):
    studio = build_studio()
    answer = studio["answer"]
    context, page = open_as(
        browser, live_server, "ana", f"/p/{studio['project'].slug}/assignments/{answer.pk}/"
    )
    assert page.evaluate("() => document.activeElement.id") == "id_answer"
    page.keyboard.type("Porque")
    page.keyboard.press("Alt+s")
    assert page.evaluate("() => document.activeElement.name") == "reason", "Alt+S opens the skip reason"
    assert page.input_value("#id_answer") == "Porque", "no s typed into the answer"
    page.keyboard.type("Preciso de um especialista.")
    with page.expect_navigation():
        page.keyboard.press("Enter")
    answer.refresh_from_db()
    assert answer.status == Assignment.Status.SKIPPED
    page.goto(f"{live_server.url}/p/{studio['project'].slug}/assignments/{answer.pk}/")
    page.locator("h1").click()
    with page.expect_navigation():
        page.keyboard.press("u")
    answer.refresh_from_db()
    assert answer.status == Assignment.Status.ACTIVE
    context.close()


def test_brackets_walk_back_and_o_changes_a_judgment_with_the_judging_keys(browser, live_server):
    studio = build_studio()
    project = studio["project"]
    judged = Judgment.objects.get(item=studio["judged"])
    context, page = open_as(
        browser, live_server, "ana", f"/p/{project.slug}/assignments/{studio['answer'].pk}/"
    )
    page.locator("h1").click()
    page.keyboard.press("[")
    page.wait_for_url(re.compile(rf".*/assignments/{judged.assignment_id}/$"))
    page.keyboard.press("?")
    assert "Change this judgment" in page.inner_text("#shortcuts"), "the panel lists o"
    page.keyboard.press("?")
    page.keyboard.press("o")
    assert page.is_visible("#judgment-change-form")
    for key in ["2"] * len(project.criterion_keys):
        page.keyboard.press(key)
    page.keyboard.press("r")
    screenshot(page, "keyboard-change-judgment")
    with page.expect_navigation():
        page.keyboard.press("Enter")
    judged.refresh_from_db()
    assert judged.vote == "reject"
    assert set(judged.ratings.values()) == {2}
    context.close()
