"""Every page, in a real browser, in English and Portuguese, at desktop width and on a 390 px phone:
axe-core finds no violation, and nothing makes the page wider than the screen (tables scroll in their own
box). Screenshots of each go to test-artifacts/a11y/."""

from pathlib import Path

import pytest

from tests.annotation.browser import ARTIFACTS, browser  # noqa: F401 - the fixture
from tests.factories import PASSWORD
from tests.site.browser_pages import (
    DESKTOP,
    LANGUAGES,
    PHONE,
    axe_source,
    axe_violations,
    build_later_pages,
    build_report_and_design_pages,
    build_studio,
    horizontal_overflow,
    pages_for,
)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
DOCS_IMAGES = Path(__file__).resolve().parents[2] / "docs" / "img"


def signed_in(browser, live_server, username, language, viewport):
    context = browser.new_context(viewport=viewport, locale=LANGUAGES[language])
    page = context.new_page()
    page.set_default_timeout(20000)
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", PASSWORD)
    page.click("main button[type=submit]")
    page.wait_for_url(f"{live_server.url}/")
    return context, page


@pytest.mark.parametrize("language", ["en", "pt-BR"])
def test_every_page_passes_axe_and_fits_a_phone(browser, live_server, language):
    axe_source()  # installs axe-core with npm ci if a fresh clone lacks it
    # With a release, runs (one with real answers), a failed import, and CausalBench and CausalityCheck projects.
    studio = build_report_and_design_pages(build_later_pages(build_studio()))
    folder = ARTIFACTS / "a11y"
    folder.mkdir(parents=True, exist_ok=True)
    problems, checked = [], 0
    for username, pages in pages_for(studio).items():
        for label, viewport in (("desktop", DESKTOP), ("390px", PHONE)):
            context, page = signed_in(browser, live_server, username, language, viewport)
            for name, path in pages:
                response = page.goto(f"{live_server.url}{path}")
                assert response.status == 200, f"{path} answered {response.status}"
                page.screenshot(path=str(folder / f"{language}-{label}-{name}.png"), full_page=True)
                if viewport is PHONE:
                    width, window = horizontal_overflow(page)
                    if width > window:
                        problems.append(f"{name} at 390 px: the page is {width} px wide")
                for violation in axe_violations(page):
                    problems.append(f"{name} ({label}): {violation}")
                checked += 1
            context.close()
    assert checked >= 2 * 10, "at least ten pages at two widths"
    assert problems == [], "\n".join(problems)


def test_the_sign_in_page_passes_axe_in_both_languages(browser, live_server):
    for language in LANGUAGES:
        for viewport in (DESKTOP, PHONE):
            context = browser.new_context(viewport=viewport, locale=LANGUAGES[language])
            page = context.new_page()
            page.goto(f"{live_server.url}/accounts/login/")
            assert axe_violations(page) == []
            width, window = horizontal_overflow(page)
            assert width <= window, f"sign-in page is {width} px wide at {window}"
            context.close()


def test_on_a_phone_the_context_and_options_come_before_the_judgment_form(browser, live_server):
    from annotation.models import Item

    studio = build_studio()
    Item.objects.filter(pk=studio["waiting"].pk).update(context="Relatório longo. " * 400)
    for language in LANGUAGES:
        context, page = signed_in(browser, live_server, "bruno", language, PHONE)
        page.goto(f"{live_server.url}/p/{studio['project'].slug}/assignments/{studio['review'].pk}/")

        def top(element_id, page=page):
            return page.evaluate(f"() => document.getElementById('{element_id}').getBoundingClientRect().top")

        question, context_top, answer, form = (
            top("part-question"),
            top("part-context"),
            top("part-answer"),
            top("judgment-form"),
        )
        page.screenshot(
            path=str(ARTIFACTS / "a11y" / f"{language}-390px-context-before-form.png"), full_page=True
        )
        if language == "en":  # the item page on a phone, as the documentation shows it
            DOCS_IMAGES.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(DOCS_IMAGES / "item-page-390px.png"))
        assert question < context_top < form, (
            "the context is read before judging",
            question,
            context_top,
            form,
        )
        assert answer < form, ("the answer is read before judging", answer, form)
        if page.locator("#part-options").count():
            assert top("part-options") < form, "the options are read before judging"
        width, window = horizontal_overflow(page)
        assert width <= window
        context.close()
