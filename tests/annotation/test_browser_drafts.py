"""In a real browser: ratings and a comment survive a reload (a server-side draft); leaving with a change not
yet kept asks first; with shortcuts turned off, single keys do nothing; the answer and skip keys."""

import re

import pytest

from annotation.models import Draft
from annotation.preferences import preferences_update
from tests.annotation.browser import browser, screenshot  # noqa: F401 - the fixture
from tests.factories import PASSWORD
from tests.site.browser_pages import DESKTOP, PHONE, build_studio

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def open_as(browser, live_server, username, path, viewport=DESKTOP, language="en-US"):
    context = browser.new_context(viewport=viewport, locale=language)
    page = context.new_page()
    page.set_default_timeout(20000)
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", PASSWORD)
    page.click("main button[type=submit]")
    page.wait_for_url(f"{live_server.url}/")
    page.goto(f"{live_server.url}{path}")
    return context, page


@pytest.mark.parametrize(("viewport", "language"), [(DESKTOP, "en-US"), (PHONE, "pt-BR")])
def test_ratings_and_a_comment_survive_a_reload(browser, live_server, viewport, language):
    studio = build_studio()
    path = f"/p/{studio['project'].slug}/assignments/{studio['review'].pk}/"
    context, page = open_as(browser, live_server, "bruno", path, viewport, language)
    page.locator("h1").click()
    page.keyboard.press("4")
    page.keyboard.press("Numpad2")  # the numeric keypad rates too
    page.keyboard.press("r")
    page.fill("textarea[name=comment]", "A resposta não explica o mecanismo.")
    with page.expect_response(re.compile(r".*/draft/$")):
        pass
    page.wait_for_function("() => true")
    assert Draft.objects.filter(assignment=studio["review"]).exists()
    page.reload()
    assert page.is_checked('input[name="rating_adherence"][value="4"]')
    assert page.is_checked('input[name="rating_fluency"][value="2"]')
    assert page.is_checked('input[name="vote"][value="reject"]')
    assert page.input_value("textarea[name=comment]") == "A resposta não explica o mecanismo."
    screenshot(page, f"draft-restored-{viewport['width']}-{language}")
    context.close()


def test_leaving_with_a_change_not_yet_kept_asks_first(browser, live_server):
    studio = build_studio()
    path = f"/p/{studio['project'].slug}/assignments/{studio['review'].pk}/"
    context, page = open_as(browser, live_server, "bruno", path)
    page.fill("textarea[name=comment]", "Ainda escrevendo")
    asked = []
    page.on("dialog", lambda dialog: (asked.append(dialog.type), dialog.dismiss()))
    page.close(run_before_unload=True)
    page.wait_for_timeout(500)
    assert asked == ["beforeunload"]
    context.close()


def test_with_shortcuts_turned_off_single_keys_do_nothing(browser, live_server):
    studio = build_studio()
    preferences_update(user=studio["people"]["bruno"], shortcuts=False)
    path = f"/p/{studio['project'].slug}/assignments/{studio['review'].pk}/"
    context, page = open_as(browser, live_server, "bruno", path)
    page.locator("h1").click()
    page.keyboard.press("4")
    page.keyboard.press("a")
    assert not page.is_checked('input[name="rating_adherence"][value="4"]')
    assert not page.is_checked('input[name="vote"][value="accept"]')
    context.close()


def test_answering_starts_in_the_answer_box_and_s_opens_the_skip_reason(browser, live_server):
    studio = build_studio()
    path = f"/p/{studio['project'].slug}/assignments/{studio['answer'].pk}/"
    context, page = open_as(browser, live_server, "ana", path)
    assert page.evaluate("() => document.activeElement.id") == "id_answer", "autofocus on the answer box"
    page.keyboard.press("Escape")
    page.keyboard.press("s")
    assert page.evaluate("() => document.activeElement.name") == "reason"
    page.keyboard.press("Escape")
    page.keyboard.press("w")
    assert page.evaluate("() => document.activeElement.id") == "id_answer"
    context.close()
