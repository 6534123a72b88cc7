"""In a real browser: a curator finds items with a search, approves the whole filter after the preview; an owner
adds a member by e-mail with tags and changes the guidelines with a preview. Screenshots at desktop and phone
widths in both languages go to test-artifacts/."""

import pytest

from annotation.models import Item, Membership, ProjectChange
from tests.annotation.browser import browser, screenshot  # noqa: F401 - the fixture
from tests.factories import PASSWORD, UserFactory
from tests.site.browser_pages import DESKTOP, PHONE, build_studio

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def signed_in(browser, live_server, username, viewport, locale):
    context = browser.new_context(viewport=viewport, locale=locale)
    page = context.new_page()
    page.set_default_timeout(20000)
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", PASSWORD)
    page.click("main button[type=submit]")
    page.wait_for_url(f"{live_server.url}/")
    return context, page


@pytest.mark.parametrize(("viewport", "locale"), [(DESKTOP, "en-US"), (PHONE, "pt-BR")])
def test_a_curator_searches_previews_and_approves_a_whole_filter(browser, live_server, viewport, locale):
    studio = build_studio()
    slug = studio["project"].slug
    context, page = signed_in(browser, live_server, "olga", viewport, locale)
    page.goto(f"{live_server.url}/p/{slug}/items/")
    page.fill("#f-q", "sarampo")
    page.click("#filter-panel summary")
    page.check("input[name=status][value=in_review]")
    page.locator("#item-filters button[type=submit]").first.click()
    page.wait_for_selector("#match-count")
    assert "1" in page.inner_text("#match-count")
    screenshot(page, f"items-filtered-{viewport['width']}-{locale}")
    page.check("input[name=scope][value=filter]")
    page.select_option("#bulk-action", "approve")
    page.click("#bulk button:not([formaction])")
    page.wait_for_selector("#preview-count")
    screenshot(page, f"items-bulk-preview-{viewport['width']}-{locale}")
    assert Item.objects.get(pk=studio["judged"].pk).status == Item.Status.IN_REVIEW
    page.click("button[name=confirm]")
    page.wait_for_selector(".message.success")
    assert Item.objects.get(pk=studio["judged"].pk).status == Item.Status.APPROVED
    assert page.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth")
    context.close()


def test_an_owner_adds_a_member_and_previews_the_guidelines(browser, live_server):
    studio = build_studio()
    slug = studio["project"].slug
    UserFactory(username="davi", email="davi@usp.br")
    context, page = signed_in(browser, live_server, "olga", DESKTOP, "pt-BR")
    page.goto(f"{live_server.url}/p/{slug}/members/")
    page.fill("#id_add-user", "davi@usp.br")
    page.select_option("#id_add-role", "annotator")
    page.fill("#id_add-expertise", "saúde, epidemiologia")
    page.click("main form.stack button[type=submit]")
    page.wait_for_selector(".message.success")
    assert Membership.objects.get(user__username="davi").expertise == ["saúde", "epidemiologia"]
    screenshot(page, "members-added-pt-BR")
    page.goto(f"{live_server.url}/p/{slug}/settings/")
    page.fill("#id_guidelines", "# Diretrizes novas\n\n**Leia o contexto** antes de avaliar.")
    page.click("button[hx-post]")
    page.wait_for_selector("#guidelines-preview strong")
    assert "Leia o contexto" in page.inner_text("#guidelines-preview")
    page.click("main button[type=submit].primary")
    page.wait_for_selector(".message.success")
    assert ProjectChange.objects.filter(kind="settings").exists()
    page.goto(f"{live_server.url}/p/{slug}/history/")
    assert "davi" in page.inner_text("main")
    screenshot(page, "project-history-pt-BR")
    context.close()
