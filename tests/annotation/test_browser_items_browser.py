"""In a real browser, in both languages and at both widths: the items page shows its table's first row without
scrolling, filters by clicking boxes, shows what is applied as chips that remove one filter each, chooses the
whole page and then every matching item, lists what a bulk action takes, and keeps a saved view — with axe-core
finding no violation on any of it. The desktop screenshots illustrate docs/guides/items-browser.md."""

from pathlib import Path

import pytest

from annotation.models import SavedItemView
from tests.annotation.browser import browser, screenshot  # noqa: F401 - the fixture
from tests.factories import PASSWORD, ItemFactory
from tests.site.browser_pages import (
    LANGUAGES,
    PHONE,
    axe_source,
    axe_violations,
    build_studio,
    horizontal_overflow,
)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

DOCS_IMAGES = Path(__file__).resolve().parents[2] / "docs" / "img"
LAPTOP = {"width": 1280, "height": 800}


def signed_in(browser, live_server, username, viewport, language):
    context = browser.new_context(viewport=viewport, locale=LANGUAGES[language])
    page = context.new_page()
    page.set_default_timeout(20000)
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", PASSWORD)
    page.click("main button[type=submit]")
    page.wait_for_url(f"{live_server.url}/")
    return context, page


def first_row_bottom(page) -> float:
    return page.evaluate(
        "() => document.querySelector('.items-table tbody tr').getBoundingClientRect().bottom"
    )


def no_violations(page, where):
    violations = axe_violations(page)
    assert violations == [], f"{where}: {violations}"


@pytest.mark.parametrize("language", ["en", "pt-BR"])
@pytest.mark.parametrize("viewport", [LAPTOP, PHONE], ids=["1280px", "390px"])
def test_a_curator_filters_chooses_and_saves_a_view_of_the_items(browser, live_server, language, viewport):
    axe_source()
    studio = build_studio()
    project = studio["project"]
    for n in range(60):
        ItemFactory(project=project, question=f"Por que a cobertura vacinal caiu na região {n}?")
    slug = project.slug
    context, page = signed_in(browser, live_server, "olga", viewport, language)
    page.goto(f"{live_server.url}/p/{slug}/items/")
    if viewport is LAPTOP:
        assert first_row_bottom(page) <= LAPTOP["height"], "the first row is visible without scrolling"
    no_violations(page, "items page")

    # Filters: boxes to click, folded away once applied, shown as chips.
    page.click("#filter-panel summary")
    page.check("input[name=status][value=in_review]")
    page.check("input[name=status][value=approved]")
    page.locator("#item-filters button[type=submit]").first.click()
    page.wait_for_selector(".chips")
    assert not page.evaluate("() => document.getElementById('filter-panel').open"), "folded once applied"
    assert page.locator(".chip").count() == 2
    if viewport is LAPTOP:
        assert first_row_bottom(page) <= LAPTOP["height"], "filtered, the first row is still in view"
        if language == "en":
            DOCS_IMAGES.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(DOCS_IMAGES / "items-browser.png"))
    screenshot(page, f"items-browser-{viewport['width']}-{language}")
    no_violations(page, "items page, filtered")
    page.locator(".chip a").nth(1).click()  # remove "Approved", keep "In review"
    page.wait_for_load_state()
    assert page.locator(".chip").count() == 1
    assert "status=in_review" in page.url
    assert "approved" not in page.url

    # Every item on the page, then every item that matches.
    page.goto(f"{live_server.url}/p/{slug}/items/")
    page.check("#choose-page")
    assert page.locator("input[name=item]:checked").count() == 50
    assert page.inner_text("#checked-count") == "50"
    page.click("#choose-all-matching")
    assert page.is_checked("#scope-filter")
    page.select_option("#bulk-action", "approve")
    page.click("#bulk button:not([formaction])")
    page.wait_for_selector("#taken-items")
    assert page.locator("#taken-items li").count() == 20
    assert page.locator("#taken-more").count() == 1, "the rest is counted"
    no_violations(page, "bulk confirmation")
    if viewport is PHONE:
        width, window = horizontal_overflow(page)
        assert width <= window, f"the confirmation is {width} px wide"

    # A saved view, shared with the project.
    page.goto(f"{live_server.url}/p/{slug}/items/?status=in_review&sort=-updated_at")
    page.click("#saved-views summary")
    page.fill("#view-name", "Em revisão")
    page.check("#save-view input[name=shared]")
    page.click("#save-view button[type=submit]")
    page.wait_for_selector(".message.success")
    view = SavedItemView.objects.get(name="Em revisão")
    assert view.shared
    assert "status=in_review" in view.query
    page.goto(f"{live_server.url}/p/{slug}/items/")
    page.click("#saved-views summary")
    page.click("#saved-views a:text('Em revisão')")
    page.wait_for_selector(".chips")
    assert "sort=-updated_at" in page.url
    no_violations(page, "items page with a saved view")
    if viewport is PHONE:
        width, window = horizontal_overflow(page)
        assert width <= window, f"the items page is {width} px wide"
    context.close()
