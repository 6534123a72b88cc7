"""In a real browser: an owner invites a person who has no account by e-mail, the link (sent by mail and shown on
the members page) creates the account on first visit; and an owner turns on, on the settings page, showing an
item's class to annotators before they judge it. Both languages, both widths, axe-core at 0 violations."""

import re

import pytest
from django.core import mail

from annotation.models import Invitation, Membership, Project
from tests.annotation.browser import browser, screenshot  # noqa: F401 - the fixture
from tests.annotation.test_browser_items_and_team import signed_in
from tests.site.browser_pages import (
    DESKTOP,
    PHONE,
    axe_source,
    axe_violations,
    build_studio,
    horizontal_overflow,
)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

WIDTHS_AND_LANGUAGES = [(DESKTOP, "en-US"), (PHONE, "pt-BR")]


def fits_and_passes_axe(page, name):
    assert axe_violations(page) == [], name
    width, window = horizontal_overflow(page)
    assert width <= window, f"{name} is {width} px wide in a {window} px window"


@pytest.mark.parametrize(("viewport", "locale"), WIDTHS_AND_LANGUAGES)
def test_an_invitation_by_e_mail_creates_the_account_on_first_visit(browser, live_server, viewport, locale):
    axe_source()
    studio = build_studio()
    slug = studio["project"].slug
    context, page = signed_in(browser, live_server, "olga", viewport, locale)
    page.goto(f"{live_server.url}/p/{slug}/members/")
    page.fill("#id_add-user", "nova@exemplo.org")
    page.select_option("#id_add-role", "annotator")
    page.fill("#id_add-expertise", "saúde")
    page.click("main form.stack button[type=submit]")
    page.wait_for_selector("#invitation-sent")
    link = page.inner_text("#invitation-link").strip()
    assert link.startswith(f"{live_server.url}/"), link
    assert [message.to for message in mail.outbox] == [["nova@exemplo.org"]]
    assert link in mail.outbox[0].body, "the e-mail carries the same link"
    assert "nova@exemplo.org" in page.inner_text("#invitations-title >> xpath=..")
    fits_and_passes_axe(page, "members page with the invitation")
    screenshot(page, f"invitation-sent-{viewport['width']}-{locale}")
    context.close()

    # The invited person, without an account, opens the link.
    guest = browser.new_context(viewport=viewport, locale=locale)
    page = guest.new_page()
    page.set_default_timeout(20000)
    page.goto(link)
    assert "nova@exemplo.org" in page.inner_text("main")
    assert studio["project"].name in page.inner_text("main")
    fits_and_passes_axe(page, "invitation page")
    screenshot(page, f"invitation-open-{viewport['width']}-{locale}")
    page.fill("#id_username", "nova")
    page.fill("#id_password1", "uma senha bem comprida 42")
    page.fill("#id_password2", "uma senha bem comprida 42")
    page.click("#invitation-form button[type=submit]")
    page.wait_for_url(re.compile(rf".*/p/{slug}/$"))
    assert page.locator(".message.success").count() == 1
    membership = Membership.objects.get(user__username="nova", project__slug=slug)
    assert membership.role == "annotator" and membership.expertise == ["saúde"]
    assert membership.user.email == "nova@exemplo.org"
    assert Invitation.objects.get(email="nova@exemplo.org").accepted_at is not None

    # The link works once: opened again (signed out), it says so.
    guest.clear_cookies()
    response = page.goto(link)
    assert response.status == 410
    assert page.locator("main .callout.error").count() == 1
    fits_and_passes_axe(page, "used invitation")
    guest.close()


@pytest.mark.parametrize(("viewport", "locale"), WIDTHS_AND_LANGUAGES)
def test_the_owner_shows_the_class_before_judging_from_the_settings_page(
    browser, live_server, viewport, locale
):
    axe_source()
    studio = build_studio()
    project = studio["project"]
    context, page = signed_in(browser, live_server, "olga", viewport, locale)
    page.goto(f"{live_server.url}/p/{project.slug}/settings/")
    switch = page.locator("#id_show_judged_fields")
    assert not switch.is_checked(), "off by default: no anchoring"
    fits_and_passes_axe(page, "settings page")
    switch.check()
    page.click("main button[type=submit].primary")
    page.wait_for_selector(".message.success")
    project = Project.objects.get(pk=project.pk)
    assert project.design_settings.get("show_judged_fields") is True
    assert page.locator("#id_show_judged_fields").is_checked()
    page.goto(f"{live_server.url}/p/{project.slug}/history/")
    assert "show_judged_fields" in page.inner_text("main")
    context.close()

    # An annotator now sees the class of the item they hold and have not judged yet.
    assignment = studio["review"]
    class_fact = "dl.facts dt:text-matches('^(Causal class|Classe causal)$')"
    context, page = signed_in(browser, live_server, "bruno", viewport, locale)
    page.goto(f"{live_server.url}/p/{project.slug}/assignments/{assignment.pk}/")
    assert page.locator(class_fact).count() == 1, "shown before judging, as the project chose"
    fits_and_passes_axe(page, "item page showing the class")
    context.close()

    # Turned off again, the class is gone from the same page.
    context, page = signed_in(browser, live_server, "olga", viewport, locale)
    page.goto(f"{live_server.url}/p/{project.slug}/settings/")
    page.locator("#id_show_judged_fields").uncheck()
    page.click("main button[type=submit].primary")
    page.wait_for_selector(".message.success")
    context.close()
    assert Project.objects.get(pk=project.pk).design_settings.get("show_judged_fields") is False
    context, page = signed_in(browser, live_server, "bruno", viewport, locale)
    page.goto(f"{live_server.url}/p/{project.slug}/assignments/{assignment.pk}/")
    page.wait_for_selector("dl.facts")
    assert page.locator(class_fact).count() == 0, "hidden again before judging"
    context.close()
