"""In a real browser: an annotator signs in, edits an answer, rates with the keyboard, submits and gets
the next item; a curator approves it. Screenshots of each page go to test-artifacts/."""

import re

import pytest

from annotation.models import Item, Judgment, Membership
from tests.annotation.browser import browser, screenshot, sign_in  # noqa: F401 - the fixture
from tests.factories import PASSWORD, ItemFactory, OptionFactory, ProjectFactory, UserFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def studio():
    """A project with one judgment per round (so the curator can decide at once), two items, guidelines."""
    project = ProjectFactory(
        slug="browser",
        name="Browser project",
        overlap=1,
        guidelines="# Diretrizes\n\n- **Aceitar** quando todas as notas ≥ 4.",
    )
    annotator, curator = UserFactory(username="ana"), UserFactory(username="carla")
    Membership.objects.create(user=annotator, project=project, role=Membership.Role.ANNOTATOR)
    Membership.objects.create(user=curator, project=project, role=Membership.Role.CURATOR)
    first = ItemFactory(
        project=project,
        question="Por que o gato derruba coisas da mesa?",
        reference_answer="Porque quer atenção.",
        causal_class="associational",
    )
    OptionFactory(
        item=first, text="Quer atenção", role="correct", rationale="Resposta do contexto", position=0
    )
    OptionFactory(
        item=first, text="A mesa é inclinada", role="irrelevant", rationale="Sem ligação", position=1
    )
    second = ItemFactory(
        project=project,
        question="Se eu castrar o gato, ele fica mais calmo?",
        reference_answer="Em geral sim.",
        causal_class="interventional",
    )
    return {"project": project, "annotator": annotator, "curator": curator, "first": first, "second": second}


def test_an_annotator_edits_rates_with_the_keyboard_submits_and_a_curator_approves(
    browser, live_server, studio
):
    project, first, second = studio["project"], studio["first"], studio["second"]

    page = sign_in(browser, live_server, "ana", PASSWORD)
    assert "Browser project" in page.content()
    screenshot(page, "01-annotator-home")

    page.click("text=Next item")
    page.wait_for_url(re.compile(r".*/assignments/\d+/$"))
    first_url = page.url
    assert "Por que o gato derruba coisas da mesa?" in page.content()
    screenshot(page, "02-item-page")

    # Edit the answer in place (htmx), which writes a revision.
    page.click("#part-answer .edit-button")
    page.fill("#part-answer-value", "Porque quer atenção e aprendeu que derrubar coisas a traz.")
    page.click("#part-answer button[type=submit]")
    page.wait_for_selector("#part-answer .answer-text")
    assert "aprendeu que derrubar" in page.inner_text("#part-answer")
    assert page.inner_text("#item-version") == "2"
    screenshot(page, "03-answer-edited")

    # The guidelines are one key away.
    page.locator("h1").click()
    page.keyboard.press("h")
    page.wait_for_selector("#guidelines .guidelines h1")
    assert "Aceitar" in page.inner_text("#guidelines")
    screenshot(page, "04-guidelines")
    page.keyboard.press("h")

    # Rate with the keyboard: 1–5 move through the criteria; a votes accept; Shift+1 picks the first class.
    for key in "5454":
        page.keyboard.press(key)
    page.keyboard.press("a")
    page.keyboard.press("Shift+Digit1")
    checked = page.eval_on_selector_all(
        "#judgment-form input:checked", "inputs => inputs.map(i => i.name + '=' + i.value)"
    )
    assert checked == [
        "rating_adherence=5",
        "rating_fluency=4",
        "rating_coherence=5",
        "rating_relevance=4",
        "vote=accept",
        "causal_class=associational",
    ]
    screenshot(page, "05-rated-with-keys")

    page.keyboard.press("Enter")
    page.wait_for_url(lambda url: url != first_url and "/assignments/" in url)
    assert "Se eu castrar o gato" in page.content()
    screenshot(page, "06-next-item")

    judgment = Judgment.objects.get(item=first)
    assert judgment.ratings == {"adherence": 5, "fluency": 4, "coherence": 5, "relevance": 4}
    assert (judgment.vote, judgment.causal_class, judgment.edited) == ("accept", "associational", True)
    assert second.pk

    # The curator reviews and approves the item.
    curator_page = sign_in(browser, live_server, "carla", PASSWORD)
    curator_page.goto(f"{live_server.url}/p/{project.slug}/review/")
    assert "Por que o gato derruba coisas da mesa?" in curator_page.content()
    screenshot(curator_page, "07-review-queue")
    curator_page.click("text=Por que o gato derruba coisas da mesa?")
    curator_page.wait_for_selector("#decision-form")
    assert "<ins>" in curator_page.content()  # the annotator's edit, as a diff
    screenshot(curator_page, "08-item-review")
    curator_page.check("#id_decision_approve")
    curator_page.click("#decision-form button[type=submit]")
    curator_page.wait_for_url(re.compile(r".*/review/$"))
    first.refresh_from_db()
    assert first.status == Item.Status.APPROVED
    screenshot(curator_page, "09-after-approval")

    curator_page.goto(f"{live_server.url}/p/{project.slug}/items/{first.pk}/history/")
    screenshot(curator_page, "10-history")
    curator_page.goto(f"{live_server.url}/p/{project.slug}/dashboard/")
    assert curator_page.locator("svg").count() >= 4
    screenshot(curator_page, "11-dashboard")


def test_two_people_editing_the_same_answer_in_browsers_merge_without_losing_text(
    browser, live_server, studio
):
    project = studio["project"]
    project.overlap = 2
    project.save()
    other = UserFactory(username="bia")
    Membership.objects.create(user=other, project=project, role=Membership.Role.ANNOTATOR)

    pages = [sign_in(browser, live_server, name, PASSWORD) for name in ("ana", "bia")]
    for page in pages:
        page.click("text=Next item")
        page.wait_for_url(re.compile(r".*/assignments/\d+/$"))
        page.click("#part-answer .edit-button")
        page.wait_for_selector("#part-answer-value")
    pages[0].fill("#part-answer-value", "Texto da Ana.")
    pages[0].click("#part-answer button[type=submit]")
    pages[0].wait_for_selector("#part-answer .answer-text")
    pages[1].fill("#part-answer-value", "Texto da Bia.")
    pages[1].click("#part-answer button[type=submit]")
    pages[1].wait_for_selector("#part-answer.conflict")
    assert "Texto da Ana." in pages[1].inner_text("#part-answer .theirs")
    assert pages[1].input_value("#part-answer-value") == "Texto da Bia."
    screenshot(pages[1], "12-edit-conflict")

    pages[1].fill("#part-answer-value", "Texto da Ana. Texto da Bia.")
    pages[1].click("#part-answer button[type=submit]")
    pages[1].wait_for_selector("#part-answer .answer-text")
    studio["first"].refresh_from_db()
    assert studio["first"].reference_answer == "Texto da Ana. Texto da Bia."
