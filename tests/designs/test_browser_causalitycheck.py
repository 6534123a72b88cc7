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


def test_an_inspector_edits_the_options_of_the_original_problem_without_seeing_which_is_correct(
    browser, live_server, checklist
):
    """The original problem's label is the correct option's letter: before judging, an annotator sees neither the
    options' roles (not even in the edit form) nor the reference answer (the correct option's text); an edit of
    the texts keeps the roles. Curators see and edit the roles."""
    from annotation.models import Option

    project, inspector = checklist
    _only_task(project, "op")
    page = sign_in(browser, live_server, inspector.username, PASSWORD)
    page.click("text=Next item")
    page.wait_for_url(re.compile(r".*/assignments/\d+/$"))
    assignment_id = int(re.search(r"/assignments/(\d+)/$", page.url).group(1))
    item = Assignment.objects.select_related("item").get(pk=assignment_id).item
    roles_before = list(item.options.order_by("position").values_list("role", "rationale"))
    assert "correct" in [role for role, _rationale in roles_before]
    assert page.locator("#part-answer").count() == 0, "the reference answer is the correct option"
    assert page.locator("#part-options .badge").count() == 0
    page.click("#part-options .edit-button")
    page.wait_for_selector("form#part-options")
    form = page.locator("form#part-options")
    assert form.locator("select").count() == 0, "no role to read (or set) in the edit form"
    assert form.locator("textarea[name$='-rationale']").count() == 0
    assert "Correct" not in form.inner_text()
    assert axe_violations(page) == []
    screenshot(page, "causalitycheck-op-options-edit-annotator")
    page.fill("#option-0-text", "As contas de luz não mudaram com a seca.")
    page.click("form#part-options button[type=submit]")
    page.wait_for_selector("#save-status:has-text('Saved')")
    options = list(
        Option.objects.filter(item=item).order_by("position").values_list("text", "role", "rationale")
    )
    assert options[0][0] == "As contas de luz não mudaram com a seca."
    assert [(role, rationale) for _text, role, rationale in options] == roles_before, "the roles are kept"
    page.context.close()

    owner_page = sign_in(browser, live_server, "cc-owner", PASSWORD)
    owner_page.goto(f"{live_server.url}/p/{project.slug}/items/{item.pk}/")
    owner_page.click("#part-options .edit-button")
    owner_page.wait_for_selector("form#part-options select")
    assert owner_page.locator("form#part-options select").count() == len(roles_before), "curators set roles"
    owner_page.context.close()


def test_over_the_api_an_annotator_cannot_read_or_move_the_correct_option_before_judging(client, checklist):
    from annotation.models import Option
    from annotation.queue import assignment_next
    from tests.factories import api_token_key

    project, inspector = checklist
    _only_task(project, "op")
    assignment = assignment_next(project=project, annotator=inspector)
    item = assignment.item
    headers = {"Authorization": f"Token {api_token_key(inspector)}"}
    base = f"/api/v1/projects/{project.slug}"
    shown = client.get(f"{base}/assignments/{assignment.pk}/", headers=headers).json()["item"]
    assert shown["reference_answer"] == ""
    assert all(option.get("role", "") in ("", None) for option in shown["options"])
    before = list(item.options.order_by("position").values_list("role", flat=True))
    moved = [{"text": f"Opção {n}", "role": "correct" if n == 0 else "other"} for n in range(len(before))]
    response = client.post(
        f"{base}/items/{item.pk}/edit/",
        {"part": "options", "options": moved, "version": item.version},
        content_type="application/json",
        headers=headers,
    )
    assert response.status_code == 200, response.content
    after = list(Option.objects.filter(item=item).order_by("position").values_list("text", "role"))
    assert [text for text, _role in after] == [f"Opção {n}" for n in range(len(before))]
    assert [role for _text, role in after] == before, "the roles stay where they were"
    client.force_login(inspector)
    assert client.get(f"/p/{project.slug}/items/{item.pk}/parts/answer/").status_code == 404, (
        "nor the answer part"
    )
