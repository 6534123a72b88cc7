"""In a real browser, keys never reach text they were not meant for.

For every error state the annotator's and the curator's pages can reach (a form the server refused), the focus
must start on the first field in error, the error must be read out (a live region and the field's description),
and typing a few hundred random keys — every shortcut key among them — then Ctrl+Enter must change nothing but
the field that had the focus: no item text, no vote, rating, class or decision other than that field.

Plain Enter is typed only where the focus is in a multi-line box (a new line there); on a choice or a one-line
box it submits, which the final Ctrl+Enter already does. Esc is left out: leaving a text box is a deliberate act, after which the
single keys act on the page as documented.
"""

import random
import re

import pytest

from annotation.judging import answer_submit
from annotation.models import CurationDecision, Item, Judgment
from tests.annotation.browser import browser, screenshot  # noqa: F401 - the fixture
from tests.factories import PASSWORD
from tests.site.browser_pages import DESKTOP, build_studio

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SHORTCUT_KEYS = [
    *"arncwsehjkvou?[]p",
    *(f"Digit{n}" for n in range(10)),
    "Numpad3",
    "Shift+Digit1",
    "Shift+Digit2",
]
TEXT_KEYS = [*"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 .,;:!-'()", "Space"]
FORMS = ("judgment-form", "judgment-change-form", "decision-form", "answer-form", "skip-form")

FORM_STATE = """() => {
  const state = {};
  for (const id of FORMS) {
    const form = document.getElementById(id);
    if (!form) continue;
    const values = {};
    for (const field of form.elements) {
      if (!field.name || field.type === "hidden" || field.name === "csrfmiddlewaretoken") continue;
      if (field.type === "radio" || field.type === "checkbox") {
        if (!(field.name in values)) values[field.name] = "";
        if (field.checked) values[field.name] = field.value;
      } else if (field.tagName !== "BUTTON") {
        values[field.name] = field.value;
      }
    }
    state[id] = values;
  }
  return state;
}""".replace("FORMS", str(list(FORMS)))

SUBMIT_UNCHECKED = """selector => {
  const form = document.querySelector(selector);
  form.noValidate = true;
  form.requestSubmit();
}"""


def open_as(browser, live_server, username, path):
    context = browser.new_context(viewport=DESKTOP, locale="en-US")
    page = context.new_page()
    page.set_default_timeout(20000)
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", PASSWORD)
    page.click("main button[type=submit]")
    page.wait_for_url(f"{live_server.url}/")
    page.goto(f"{live_server.url}{path}")
    return context, page


def refuse(page, form_selector, *, check=(), fill=None):
    """Fill the form as a hurried person would, and submit it past the browser's own checks: the server refuses."""
    for selector in check:
        page.check(selector)
    for selector, value in (fill or {}).items():
        page.fill(selector, value)
    with page.expect_navigation():
        page.evaluate(SUBMIT_UNCHECKED, form_selector)


def judge_page(studio):
    return f"/p/{studio['project'].slug}/assignments/{studio['review'].pk}/"


def all_ratings(studio, value="4"):
    return [
        f'#judgment-form input[name="rating_{key}"][value="{value}"]'
        for key in studio["project"].criterion_keys
    ]


def state_needs_revision_without_comment(studio, page):
    refuse(
        page,
        "#judgment-form",
        check=[*all_ratings(studio), "#id_vote_needs_revision", "#id_causal_class_associational"],
    )
    return "comment"


def state_no_ratings(studio, page):
    refuse(page, "#judgment-form", check=["#id_vote_accept", "#id_causal_class_associational"])
    return f"rating_{studio['project'].criterion_keys[0]}"


def state_no_vote(studio, page):
    refuse(page, "#judgment-form", check=[*all_ratings(studio), "#id_causal_class_associational"])
    return "vote"


def state_no_class(studio, page):
    refuse(page, "#judgment-form", check=[*all_ratings(studio), "#id_vote_reject"])
    return "causal_class"


def state_blank_answer(studio, page):
    refuse(page, "#answer-form", fill={"#id_answer": "   "})
    return "answer"


def state_skip_without_reason(studio, page):
    page.click("details.skip summary")
    refuse(page, "details.skip form")
    return "reason"


def state_change_to_needs_revision_without_comment(studio, page):
    page.click("details.change-judgment summary")
    page.fill("#judgment-change-form textarea[name=comment]", "")
    refuse(page, "#judgment-change-form", check=["#judgment-change-form #id_vote_needs_revision"])
    return "comment"


def state_revise_without_note(studio, page):
    refuse(page, "#decision-form", check=["#id_decision_revise"])
    return "note"


def state_no_decision(studio, page):
    refuse(page, "#decision-form")
    return "decision"


def _reopened_answer_page(studio):
    """Ana has written the answer of her question: the page offers to reopen it."""
    assignment = studio["answer"]
    answer_submit(assignment=assignment, answer="Porque sim.", expected_version=assignment.item.version)
    return f"/p/{studio['project'].slug}/assignments/{assignment.pk}/"


def state_reopened_answer_blank(studio, page):
    page.click("details.reopen-answer summary")
    refuse(page, "#answer-form", fill={"#id_answer": "   "})
    return "answer"


def _own_judged_page(studio):
    judgment = Judgment.objects.get(item=studio["judged"])
    return f"/p/{studio['project'].slug}/assignments/{judgment.assignment_id}/"


def _review_page(studio):
    return f"/p/{studio['project'].slug}/items/{studio['judged'].pk}/"


STATES = {
    "judge: needs revision without a comment": ("bruno", judge_page, state_needs_revision_without_comment),
    "judge: no ratings": ("bruno", judge_page, state_no_ratings),
    "judge: no vote": ("bruno", judge_page, state_no_vote),
    "judge: no class": ("bruno", judge_page, state_no_class),
    "answer: blank": (
        "ana",
        lambda s: f"/p/{s['project'].slug}/assignments/{s['answer'].pk}/",
        state_blank_answer,
    ),
    "skip: no reason": (
        "ana",
        lambda s: f"/p/{s['project'].slug}/assignments/{s['answer'].pk}/",
        state_skip_without_reason,
    ),
    "change: needs revision without a comment": (
        "ana",
        _own_judged_page,
        state_change_to_needs_revision_without_comment,
    ),
    "reopen answer: blank": ("ana", _reopened_answer_page, state_reopened_answer_blank),
    "decide: revise without a note": ("carla", _review_page, state_revise_without_note),
    "decide: nothing chosen": ("carla", _review_page, state_no_decision),
}


def item_texts(project):
    return {
        item.pk: {
            "question": item.question,
            "context": item.context,
            "reference_answer": item.reference_answer,
            "causal_class": item.causal_class,
            "options": [(o.text, o.role, o.rationale) for o in item.options.order_by("position")],
        }
        for item in Item.objects.filter(project=project).prefetch_related("options")
    }


def judgments(project):
    return {
        j.pk: {
            "vote": j.vote,
            "causal_class": j.causal_class,
            "comment": j.comment,
            **{f"rating_{k}": str(v) for k, v in j.ratings.items()},
        }
        for j in Judgment.objects.filter(item__project=project)
    }


def decisions(project):
    return {d.pk: d.decision for d in CurationDecision.objects.filter(item__project=project)}


def focused(page) -> dict:
    return page.evaluate(
        """() => {
          const element = document.activeElement;
          const describedBy = (element.getAttribute("aria-describedby") || "").split(" ").filter(Boolean);
          return {
            name: element.name || "",
            form: element.form ? element.form.id : "",
            newLine: element.tagName === "TEXTAREA",
            invalid: element.getAttribute("aria-invalid"),
            described: describedBy.map(id => (document.getElementById(id) || {}).textContent || "").join(" "),
          };
        }"""
    )


def random_keys(rng: random.Random, new_line: bool, n: int = 300) -> list[str]:
    keys = list(SHORTCUT_KEYS) + (["Enter"] if new_line else [])  # every shortcut key at least once
    pool = SHORTCUT_KEYS * 3 + TEXT_KEYS + (["Enter"] if new_line else [])
    keys += [rng.choice(pool) for _ in range(n - len(keys))]
    rng.shuffle(keys)
    return keys


def compare_judgment(before_form: dict, stored: dict, focus: str, where: str) -> None:
    for name, value in stored.items():
        if name in ("comment",) or name == focus or name not in before_form:
            continue
        assert value == before_form[name], (
            f"{where}: {name} became {value!r}; the form said {before_form[name]!r}"
        )


@pytest.mark.parametrize("state", list(STATES))
def test_random_typing_after_a_refused_form_changes_only_the_focused_field(browser, live_server, state):
    studio = build_studio()
    project = studio["project"]
    username, path_of, reach = STATES[state]
    context, page = open_as(browser, live_server, username, path_of(studio))
    expected_focus = reach(studio, page)
    page.wait_for_function("() => document.activeElement && document.activeElement !== document.body")
    focus = focused(page)
    assert focus["name"] == expected_focus, f"{state}: the focus starts on {focus['name']!r}"
    assert focus["invalid"] == "true", f"{state}: the focused field is marked invalid"
    assert focus["described"].strip(), f"{state}: the focused field names its error"
    assert page.locator("[data-error-summary][role=alert]").count() == 1, f"{state}: the errors are announced"

    texts, votes, decided = item_texts(project), judgments(project), decisions(project)
    form_before = page.evaluate(FORM_STATE)
    seed = sum(map(ord, state))
    for key in random_keys(random.Random(seed), focus["newLine"]):
        page.keyboard.press(key)
    form_after = page.evaluate(FORM_STATE)
    for form_id, values in form_before.items():
        for name, value in values.items():
            if form_id == focus["form"] and name == focus["name"]:
                continue
            assert form_after.get(form_id, {}).get(name) == value, (
                f"{state} (seed {seed}): {form_id}/{name} changed from {value!r} to "
                f"{form_after.get(form_id, {}).get(name)!r} while the focus was on {focus['name']}"
            )
    assert page.locator("form.part.editing").count() == 0, f"{state}: no edit box was opened"
    screenshot(page, f"keys-fuzz-{re.sub(r'[^a-z]+', '-', state)}")

    page.keyboard.press("Control+Enter")
    page.wait_for_load_state("networkidle")
    page.wait_for_timeout(300)
    page.wait_for_load_state("networkidle")

    after = item_texts(project)
    for pk, fields in texts.items():
        for name, value in fields.items():
            if name == "reference_answer" and focus["name"] == "answer" and pk == studio["answer"].item_id:
                continue
            assert after[pk][name] == value, (
                f"{state} (seed {seed}): item {pk}'s {name} changed to {after[pk][name]!r}"
            )
    prepared = form_before.get(focus["form"], {})
    for pk, stored in judgments(project).items():
        if votes.get(pk) == stored:
            continue
        compare_judgment(prepared, stored, focus["name"], f"{state} (seed {seed}), judgment {pk}")
    for pk, decision in decisions(project).items():
        if pk in decided or focus["name"] == "decision":
            continue
        assert decision == prepared.get("decision"), f"{state} (seed {seed}): decided {decision!r}"
    context.close()


def test_typing_a_comment_after_needs_revision_is_refused_never_edits_the_question(browser, live_server):
    """The reported case: vote *needs revision* without a comment, then type the comment and Ctrl+Enter."""
    studio = build_studio()
    waiting = studio["waiting"]
    question = waiting.question
    context, page = open_as(browser, live_server, "bruno", judge_page(studio))
    state_needs_revision_without_comment(studio, page)
    page.wait_for_load_state("networkidle")
    page.keyboard.type("Completa, falta citar o efeito.", delay=20)
    page.keyboard.press("Control+Enter")
    page.wait_for_load_state("networkidle")
    page.wait_for_timeout(500)
    waiting.refresh_from_db()
    assert waiting.question == question, "the question is untouched"
    assert waiting.version == 1, "no revision was made"
    judgment = Judgment.objects.get(assignment=studio["review"])
    assert (judgment.vote, judgment.comment) == ("needs_revision", "Completa, falta citar o efeito.")
    context.close()
