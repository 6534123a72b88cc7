"""Every page in Portuguese shows no English the project's own catalogues translate: a real browser walks
the pages in pt-BR and looks for each catalogue entry's English text (and the project's criteria and labels
by their English names) among the words a person sees."""

import re
from pathlib import Path

import polib
import pytest

from tests.annotation.browser import ARTIFACTS, browser  # noqa: F401 - the fixture
from tests.factories import PASSWORD
from tests.site.browser_pages import DESKTOP, build_later_pages, build_studio, pages_for

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
ROOT = Path(__file__).resolve().parents[2]
CATALOGUES = [path for path in ROOT.glob("*/locale/pt_BR/LC_MESSAGES/django.po") if ".venv" not in path.parts]
CATALOGUES.append(ROOT / "locale/pt_BR/LC_MESSAGES/django.po")
PLACEHOLDER = re.compile(r"%\(\w+\)[sdf]|%[sd]|\{\w*\}")


def english_strings(project) -> set[str]:
    """What a Portuguese page must not show: each catalogue entry's English text that reads differently in
    Portuguese (the longest literal run of a text with placeholders), and the project's own names."""
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
    for criterion in project.criteria:
        if criterion.get("label_pt") and criterion["label"] != criterion["label_pt"]:
            strings.add(criterion["label"])
    return strings


def shows(text: str, string: str) -> bool:
    return re.search(r"(?<![\w])" + re.escape(string) + r"(?![\w])", text) is not None


def test_every_page_in_portuguese_shows_no_english_from_the_catalogues(browser, live_server):
    studio = build_later_pages(build_studio())  # with a release, a finished run and a failed import
    english = english_strings(studio["project"])
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
            # What people and models wrote is data, not interface: the test data is Portuguese anyway.
            found += [f"{name}: “{string}”" for string in sorted(english) if shows(visible, string)]
            page.screenshot(path=str(folder / f"{name}.png"), full_page=True)
        context.close()
    assert found == [], "English on Portuguese pages:\n" + "\n".join(found)
