"""In headless Chromium: each design's annotation form is what the design declares.

ExpliCa: only the 1–10 acceptability rating, typed with the keys 1–9 and 0 for 10, no vote, no class, no edit
button on the shared sentence. CausalBench: the scenario once, the yes/no answer checked, no fluency ratings.
"""

import re

import pytest

from annotation.designs import design_for
from annotation.models import Judgment, Membership, Project
from designs.causalbench.design import example_scenarios_load
from designs.causalbench.design import read_example as causalbench_example
from designs.explica.design import example_pairs_load
from designs.explica.design import read_example as explica_example
from tests.annotation.browser import browser, screenshot, sign_in  # noqa: F401 - the fixture
from tests.factories import PASSWORD, UserFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def project_of(design: str, slug: str, **overrides) -> tuple[Project, object]:
    project = Project.objects.create(
        name=slug, slug=slug, design=design, **{**design_for(design).project_defaults(), **overrides}
    )
    rater = UserFactory(username=f"{slug}-rater")
    Membership.objects.create(user=rater, project=project, role=Membership.Role.ANNOTATOR)
    return project, rater


def open_next_item(page):
    page.click("text=Next item")
    page.wait_for_url(re.compile(r".*/assignments/\d+/$"))


def test_an_explica_rater_types_10_with_the_key_0_and_is_asked_nothing_else(browser, live_server):
    project, rater = project_of("explica", "explica-browser", overlap=1)
    example_pairs_load(project, explica_example())

    page = sign_in(browser, live_server, rater.username, PASSWORD)
    open_next_item(page)
    assert page.locator('input[name="vote"]').count() == 0
    assert page.locator('input[name="causal_class"]').count() == 0
    assert page.locator("#part-question .edit-button").count() == 0
    page.locator("h1").click()
    page.keyboard.press("0")
    checked = page.eval_on_selector_all(
        "#judgment-form input:checked", "inputs => inputs.map(i => i.name + '=' + i.value)"
    )
    assert checked == ["rating_acceptability=10"]
    screenshot(page, "explica-rated-10")
    first_url = page.url
    page.keyboard.press("Enter")
    page.wait_for_url(lambda url: url != first_url)
    judgment = Judgment.objects.get(annotator=rater)
    assert (judgment.ratings, judgment.vote, judgment.causal_class) == ({"acceptability": 10}, "", "")


def test_a_causalbench_annotator_sees_the_scenario_once_and_checks_the_answer(browser, live_server):
    from designs.causalbench.checks import check_record, questions_to_check

    project, rater = project_of("causalbench", "causalbench-browser")
    example_scenarios_load(project, causalbench_example())
    # The review queue serves no question whose blind check is pending: a model's second answer
    # that differs sends each to review in the open.
    for question in questions_to_check(project):
        check_record(
            item=question, answer="no" if question.reference_answer == "yes" else "yes", model="checker"
        )

    page = sign_in(browser, live_server, rater.username, PASSWORD)
    open_next_item(page)
    assert page.locator("#causalbench-scenario").count() == 1 and page.locator(".group-context").count() == 0
    ratings = page.eval_on_selector_all(
        "#judgment-form fieldset.criterion", "sets => sets.map(s => s.dataset.criterion)"
    )
    assert ratings == ["answer_correct"]
    page.locator("h1").click()
    page.keyboard.press("1")
    page.keyboard.press("a")
    page.keyboard.press("Shift+Digit1")
    screenshot(page, "causalbench-checked")
    first_url = page.url
    page.keyboard.press("Enter")
    page.wait_for_url(lambda url: url != first_url)
    assert Judgment.objects.get(annotator=rater).ratings == {"answer_correct": 1}
