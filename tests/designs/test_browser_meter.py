"""In headless Chromium: METER annotators do their stage's work on the item page, asked the stage's own questions:
verification is a vote on the cause–effect pair, with no ratings and no class; filtering rates
the five criteria 1 or 0. axe-core finds no violation on either page."""

import re

import pytest

from annotation.models import Item, ItemGroup, Judgment, Membership
from annotation.projects import project_create
from designs.meter import pipeline
from tests.annotation.browser import browser, screenshot, sign_in  # noqa: F401 - the fixture
from tests.factories import PASSWORD, UserFactory
from tests.site.browser_pages import axe_violations

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def meter(db):
    from annotation.designs import design_for

    owner = UserFactory(username="meter-owner")
    project = project_create(name="METER", slug="meter-browser", design="meter", created_by=owner)
    raters = [UserFactory(username=f"meter-rater-{n}") for n in (1, 2)]
    for rater in raters:
        Membership.objects.create(user=rater, project=project, role=Membership.Role.ANNOTATOR)
    design_for(project).load_example(project, {})
    return project, raters


def _entry_at(project, stage: str) -> ItemGroup:
    entry = ItemGroup.objects.filter(project=project).order_by("pk").first()
    entry.metadata = {**entry.metadata, "stage": stage}
    entry.save(update_fields=["metadata"])
    return entry


def _open_next_item(page):
    page.click("text=Next item")
    page.wait_for_url(re.compile(r".*/assignments/\d+/$"))


def _submit(page):
    first_url = page.url
    page.click("#judgment-form button[type=submit]")
    page.wait_for_url(lambda url: url != first_url)


def test_a_meter_annotator_verifies_a_pair_with_a_vote_and_nothing_else(browser, live_server, meter):
    project, (rater, _other) = meter
    entry = _entry_at(project, "verification")
    pair = pipeline.pair_item_create(entry=entry)

    page = sign_in(browser, live_server, rater.username, PASSWORD)
    _open_next_item(page)
    stage = page.locator("[data-meter-stage]")
    assert stage.get_attribute("data-meter-stage") == "verification"
    assert entry.metadata["cause"] in stage.inner_text() and entry.metadata["effect"] in stage.inner_text()
    assert page.locator("#judgment-form fieldset.criterion").count() == 0  # no ratings of a pair
    assert page.locator('input[name="causal_class"]').count() == 0  # the level is fixed by the entry
    assert axe_violations(page) == []

    page.click("label.vote-accept")
    screenshot(page, "meter-verification")
    _submit(page)
    judgment = Judgment.objects.get(annotator=rater, item=pair)
    assert (judgment.vote, judgment.ratings, judgment.causal_class) == (Judgment.Vote.ACCEPT, {}, "")


def test_a_meter_annotator_filters_a_question_on_its_five_criteria(browser, live_server, meter):
    project, (_first, rater) = meter
    entry = _entry_at(project, "generation")
    question = pipeline.question_create(
        entry=entry,
        level="L1",
        question="Is the rain seen together with wet streets?",
        answer="Yes: wet streets come with the rain.",
        distractors={
            role: {"text": f"A {role} option.", "rationale": f"It is {role}."}
            for role in ("contradictory", "unfounded", "reversal", "irrelevant")
        },
        stem="Is ... seen together with ...?",
        provenance={"model": "test"},
    )
    # Editing passed (two editors and a reviewer accepted): the question's next round is filtering.
    rounds = {**question.metadata["rounds"], "2": {"stage": "filtering"}}
    Item.objects.filter(pk=question.pk).update(
        metadata={**question.metadata, "stage": "filtering", "rounds": rounds}, round=2
    )

    page = sign_in(browser, live_server, rater.username, PASSWORD)
    _open_next_item(page)
    assert page.locator("[data-meter-stage]").get_attribute("data-meter-stage") == "filtering"
    criteria = page.eval_on_selector_all(
        "#judgment-form fieldset.criterion", "sets => sets.map(s => s.dataset.criterion)"
    )
    assert criteria == list(pipeline.FILTER_CRITERIA)
    assert page.locator('input[name="causal_class"]').count() == 0
    assert axe_violations(page) == []

    for key in pipeline.FILTER_CRITERIA:
        page.check(f'#judgment-form input[name="rating_{key}"][value="1"]')
    if page.locator('#judgment-form input[name="vote"]').count():
        page.click("label.vote-accept")
    screenshot(page, "meter-filtering")
    _submit(page)
    judgment = Judgment.objects.get(annotator=rater, item=question)
    assert judgment.ratings == dict.fromkeys(pipeline.FILTER_CRITERIA, 1)
