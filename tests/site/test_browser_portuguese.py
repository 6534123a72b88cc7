"""Every page in Portuguese shows no English the project's own catalogues translate: a real browser walks
the pages in pt-BR and looks for each catalogue entry's English text (and the project's criteria and labels
by their English names) among the words a person sees."""

import re
from pathlib import Path

import polib
import pytest

from tests.annotation.browser import ARTIFACTS, browser  # noqa: F401 - the fixture
from tests.factories import PASSWORD
from tests.site.browser_pages import (
    DESKTOP,
    build_later_pages,
    build_report_and_design_pages,
    build_studio,
    pages_for,
)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
ROOT = Path(__file__).resolve().parents[2]
CATALOGUES = [path for path in ROOT.glob("*/locale/pt_BR/LC_MESSAGES/django.po") if ".venv" not in path.parts]
CATALOGUES.append(ROOT / "locale/pt_BR/LC_MESSAGES/django.po")
PLACEHOLDER = re.compile(r"%\(\w+\)[sdf]|%[sd]|\{\w*\}")


def english_strings(*projects) -> set[str]:
    """What a Portuguese page must not show: each catalogue entry's English text that reads differently in
    Portuguese (the longest literal run of a text with placeholders), the projects' own names in English, and
    the keys behind names that read differently in Portuguese (a class, a criterion, a prompting condition)."""
    strings = set()
    for path in CATALOGUES:
        for entry in polib.pofile(str(path)):
            if not entry.translated() or entry.obsolete:
                continue
            translation = entry.msgstr or entry.msgstr_plural.get(0, "")
            for text in (entry.msgid, entry.msgid_plural):
                if not text or text == translation:
                    continue
                literal = max(PLACEHOLDER.split(text), key=len).strip(" .,:;“”()")
                if len(literal) >= 4 and literal not in translation:
                    strings.add(literal)
    # A word both languages share ("causal", "Total") is not English on a Portuguese page.
    portuguese = set()
    for path in CATALOGUES:
        for entry in polib.pofile(str(path)):
            portuguese.update(re.findall(r"\w+", entry.msgstr or " ".join(entry.msgstr_plural.values())))
    strings = {string for string in strings if string not in portuguese}
    from django.utils import translation

    from annotation.labels import class_label
    from designs.causalbench.design import DOMAINS
    from designs.causalbench.templatetags.design_tags import domain_label
    from evaluation.runs.conditions import CONDITIONS
    from evaluation.runs.reading import condition_name

    for project in projects:
        for criterion in project.criteria:
            if criterion.get("label_pt") and criterion["label"] != criterion["label_pt"]:
                strings.add(criterion["label"])
                strings.add(criterion["key"])
        with translation.override("pt-br"):
            strings.update(label for label in project.label_set if class_label(project, label) != label)
    with translation.override("pt-br"):
        strings.update(
            name for names in CONDITIONS.values() for name in names if condition_name(name) != name
        )
        # CausalBench's domains, as its check report names them.
        strings.update(key for key in DOMAINS if domain_label(key) != key)
    return strings


def glosses(english: set[str]) -> list[str]:
    """Portuguese texts of the catalogues that use a key's English term on purpose ("sem a classe
    (class-agnostic)", "Exemplos few-shot", an example of what to type): the term there is not a leftover."""
    keys = [string for string in english if re.fullmatch(r"[a-z][a-z_-]+", string)]
    runs = set()
    for path in CATALOGUES:
        for entry in polib.pofile(str(path)):
            for translation in [entry.msgstr, *entry.msgstr_plural.values()]:
                for run in PLACEHOLDER.split(translation or ""):
                    if any(shows(run, key) for key in keys):
                        runs.add(run.strip())
    return sorted(runs, key=len, reverse=True)


def shows(text: str, string: str) -> bool:
    return re.search(r"(?<![\w])" + re.escape(string) + r"(?![\w])", text) is not None


def test_every_page_in_portuguese_shows_no_english_from_the_catalogues(browser, live_server):
    # With a release, a finished run and a failed import, a run with real answers, and the CausalBench and
    # CausalityCheck projects whose summaries their project pages show.
    studio = build_report_and_design_pages(build_later_pages(build_studio()))
    english = english_strings(studio["project"], studio["causalbench"], studio["causalitycheck"])
    glossed = glosses(english)
    folder = ARTIFACTS / "pt-BR"
    folder.mkdir(parents=True, exist_ok=True)
    found = []
    for username, pages in pages_for(studio).items():
        context = browser.new_context(viewport=DESKTOP, locale="pt-BR")
        page = context.new_page()
        page.goto(f"{live_server.url}/accounts/login/")
        page.fill("#id_username", username)
        page.fill("#id_password", PASSWORD)
        page.click("main button[type=submit]")
        page.wait_for_url(f"{live_server.url}/")
        for name, path in pages:
            if name == "api-docs":
                continue  # the API's reference (operations, fields) is the schema's, in English like the API itself
            page.goto(f"{live_server.url}{path}")
            assert page.locator("html").get_attribute("lang") == "pt-br", f"{path} is not in Portuguese"
            # What the page shows, without what is typed in form fields (criterion keys in the settings), code
            # (the API's URLs and keys one types, as in the token page's examples) and what is marked as another language (the dataset
            # card, the README.md a release publishes in English).
            visible = page.evaluate("""() => { const body = document.body.cloneNode(true);
                body.querySelectorAll('textarea, input, script, style, pre, code, [lang]:not([lang^=pt])')
                    .forEach(e => e.remove());
                document.documentElement.appendChild(body); const text = body.innerText; body.remove();
                return text; }""")
            for gloss in glossed:
                visible = visible.replace(gloss, " ")
            # What people and models wrote is data, not interface: the test data is Portuguese anyway.
            found += [f"{name}: “{string}”" for string in sorted(english) if shows(visible, string)]
            page.screenshot(path=str(folder / f"{name}.png"), full_page=True)
        context.close()
    assert found == [], "English on Portuguese pages:\n" + "\n".join(found)
