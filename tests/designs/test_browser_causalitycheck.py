"""In headless Chromium: a CausalityCheck inspector judges a checklist item on the item page, asked what the design
declares: the item's cell (task × variant) is shown, the labels offered are those of the item's
own task only (answerable / unanswerable for answerable judging, the four verdicts for causal validity
assessing), and the project's two criteria are rated. axe-core finds no violation on the page."""

import re

import pytest

from annotation.designs import design_for
from annotation.models import Assignment, Item, Judgment, Membership
from annotation.projects import project_create
from designs.causalitycheck.seeds import TASK_ROLES
from tests.annotation.browser import browser, screenshot, sign_in  # noqa: F401 - the fixture
from tests.factories import PASSWORD, UserFactory
from tests.site.browser_pages import axe_violations

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def checklist(db):
    owner = UserFactory(username="cc-owner")
    project = project_create(
        name="CausalityCheck", slug="cc-browser", design="causalitycheck", created_by=owner
    )
    inspector = UserFactory(username="cc-inspector")
    Membership.objects.create(user=inspector, project=project, role=Membership.Role.ANNOTATOR)
    design_for(project).load_example(project, {})
    return project, inspector


def _only_task(project, task: str) -> None:
    """Keep one task's items in the queue, so the test knows what the next item asks."""
    Item.objects.filter(project=project).exclude(metadata__task=task).update(status=Item.Status.REJECTED)


def _offered_labels(page) -> list[str]:
    return page.eval_on_selector_all(
        '#judgment-form input[name="causal_class"]', "inputs => inputs.map(i => i.value)"
    )


@pytest.mark.parametrize("task", ["aj", "cva"])
def test_an_inspector_is_offered_the_labels_of_the_items_task_only(browser, live_server, checklist, task):
    project, inspector = checklist
    _only_task(project, task)

    page = sign_in(browser, live_server, inspector.username, PASSWORD)
    page.click("text=Next item")
    page.wait_for_url(re.compile(r".*/assignments/\d+/$"))
    assert page.locator(".checklist-cell").count() == 1
    assert _offered_labels(page) == list(dict.fromkeys(TASK_ROLES[task].values()))
    criteria = page.eval_on_selector_all(
        "#judgment-form fieldset.criterion", "sets => sets.map(s => s.dataset.criterion)"
    )
    assert criteria == ["validity", "fluency"]
    assert axe_violations(page) == []

    assignment_id = int(re.search(r"/assignments/(\d+)/$", page.url).group(1))
    item = Assignment.objects.select_related("item").get(pk=assignment_id).item
    gold = TASK_ROLES[task][item.metadata["role"]]
    for key in criteria:
        page.check(f'#judgment-form input[name="rating_{key}"][value="5"]')
    page.check(f'#judgment-form input[name="causal_class"][value="{gold}"]')
    page.click("label.vote-accept")
    screenshot(page, f"causalitycheck-{task}")
    first_url = page.url
    page.click("#judgment-form button[type=submit]")
    page.wait_for_url(lambda url: url != first_url)

    judgment = Judgment.objects.get(annotator=inspector, item=item)
    assert (judgment.causal_class, judgment.vote, judgment.ratings) == (
        gold,
        Judgment.Vote.ACCEPT,
        {"validity": 5, "fluency": 5},
    )
