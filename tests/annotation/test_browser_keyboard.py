"""In a real browser, by keyboard only: `e` edits the focused part with focus inside the edit box, Ctrl+Enter
saves it and focus comes back to the part; a curator moves through the review queue with j/k and approves an
item with `a` and Enter. With shortcuts turned off the single keys do nothing."""

import re

import pytest

from annotation.models import CurationDecision, Item, Membership
from tests.annotation.browser import browser, screenshot, sign_in  # noqa: F401 - the fixture
from tests.factories import PASSWORD, ItemFactory, ProjectFactory, UserFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def review_queue():
    """Two items whose round is complete, the more disputed first in the curator's queue."""
    project = ProjectFactory(slug="teclado", name="Projeto teclado", overlap=1)
    curator = UserFactory(username="carla")
    Membership.objects.create(user=curator, project=project, role=Membership.Role.CURATOR)
    in_review = {"status": Item.Status.IN_REVIEW, "round": 1, "round_assigned": 1, "round_judged": 1}
    disputed = ItemFactory(
        project=project,
        question="A chuva causa o trânsito lento?",
        reference_answer="Sim, em parte.",
        round_disagreement=0.8,
        **in_review,
    )
    calm = ItemFactory(
        project=project,
        question="Does smoking cause cancer?",
        reference_answer="Yes, it raises the risk.",
        round_disagreement=0.2,
        **in_review,
    )
    return {"project": project, "curator": curator, "disputed": disputed, "calm": calm}


def review_page(browser, live_server, project, item):
    """The curator's review page of ``item``, signed in as Carla."""
    page = sign_in(browser, live_server, "carla", PASSWORD)
    page.goto(f"{live_server.url}/p/{project.slug}/items/{item.pk}/")
    return page


def test_e_edits_the_focused_part_and_ctrl_enter_saves_it_with_focus_kept(browser, live_server, review_queue):
    project, item = review_queue["project"], review_queue["disputed"]
    page = review_page(browser, live_server, project, item)

    page.click("#part-answer .answer-text")
    page.keyboard.press("e")
    page.wait_for_selector("form#part-answer textarea")
    page.wait_for_function("() => document.activeElement.id === 'part-answer-value'")
    page.keyboard.press("End")
    page.keyboard.type(" A chuva reduz a velocidade média.")
    page.keyboard.press("Control+Enter")
    page.wait_for_selector("section#part-answer .answer-text")
    page.wait_for_function("() => document.activeElement.id === 'part-answer'")
    assert "reduz a velocidade média" in page.inner_text("#part-answer")
    item.refresh_from_db()
    assert item.reference_answer.endswith("A chuva reduz a velocidade média.")
    screenshot(page, "keyboard-01-edited-with-e")


def test_a_curator_moves_with_j_and_k_and_approves_with_a_and_enter(browser, live_server, review_queue):
    project, disputed, calm = review_queue["project"], review_queue["disputed"], review_queue["calm"]
    page = review_page(browser, live_server, project, disputed)

    page.keyboard.press("?")
    assert page.is_visible("#shortcuts") and "approve" in page.inner_text("#shortcuts")
    page.keyboard.press("?")

    page.keyboard.press("j")
    page.wait_for_url(re.compile(rf".*/items/{calm.pk}/$"))
    page.keyboard.press("k")
    page.wait_for_url(re.compile(rf".*/items/{disputed.pk}/$"))

    page.keyboard.press("a")
    assert page.is_checked("#id_decision_approve")
    screenshot(page, "keyboard-02-approve-chosen")
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(rf".*/items/{calm.pk}/$"))
    decision = CurationDecision.objects.get(item=disputed)
    assert (decision.decision, decision.curator) == ("approve", review_queue["curator"])


def test_single_keys_do_nothing_when_the_curator_turned_shortcuts_off(browser, live_server, review_queue):
    from annotation.preferences import preferences_update

    project, item = review_queue["project"], review_queue["disputed"]
    preferences_update(user=review_queue["curator"], shortcuts=False)
    page = review_page(browser, live_server, project, item)
    assert page.get_attribute("body", "data-shortcuts") == "off"

    page.keyboard.press("a")
    page.keyboard.press("j")
    page.wait_for_timeout(300)
    assert not page.is_checked("#id_decision_approve")
    assert page.url.endswith(f"/items/{item.pk}/")
