"""The pictures of the README and the role guides are taken here, from the demo a newcomer gets, in English and
Portuguese: running the browser tests makes them again, so they show the pages as they are."""

import re
from pathlib import Path

import pytest

from annotation.demo import demo_load_all
from tests.annotation.browser import browser  # noqa: F401 - the fixture
from tests.site.browser_pages import DESKTOP, LANGUAGES

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
ROOT = Path(__file__).resolve().parents[2]
DOCS_IMAGES = ROOT / "docs" / "img"
PROJECT = "causal-qa-pt-demo"
# Picture → who is signed in, the language, and where the guide shows it.
PICTURES = {
    "annotate.png": ("annotator1", "en", "README.md and docs/guides/annotator.md"),
    "anotar.png": ("annotator1", "pt-BR", "docs/guides/anotador.md"),
    "review.png": ("curator", "en", "docs/guides/curator.md"),
}


def demo_page(browser, live_server, username, language):
    context = browser.new_context(viewport=DESKTOP, locale=LANGUAGES[language])
    page = context.new_page()
    page.set_default_timeout(20000)
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", username)  # the demo's accounts: user = password
    page.click("main button[type=submit]")
    page.wait_for_url(f"{live_server.url}/")
    return context, page


def test_the_guides_pictures_come_from_the_demo_in_both_languages(browser, live_server):
    demo_load_all()
    DOCS_IMAGES.mkdir(exist_ok=True)
    for picture, (username, language, _where) in PICTURES.items():
        context, page = demo_page(browser, live_server, username, language)
        if username == "curator":
            response = page.goto(f"{live_server.url}/p/{PROJECT}/review/")
            assert response.status == 200
            page.click("main table a[href*='/items/']")
            page.wait_for_url(re.compile(r".*/items/\d+/$"))
        else:
            page.goto(f"{live_server.url}/p/{PROJECT}/queue/")
            page.click("main form[action$='/queue/next/'] button")
            page.wait_for_url(re.compile(r".*/assignments/\d+/$"))
        assert page.locator("html").get_attribute("lang") == language.lower()
        page.screenshot(path=str(DOCS_IMAGES / picture))
        context.close()


def test_every_picture_of_the_docs_is_one_the_browser_tests_take():
    """A picture no test takes goes stale unseen; one no page shows is dead weight."""
    shown = set()
    for page in [ROOT / "README.md", *(ROOT / "docs").rglob("*.md")]:
        shown |= {
            Path(name).name for name in re.findall(r"!\[[^\]]*\]\(([^)]+\.png)\)", page.read_text("utf-8"))
        }
    taken = set()
    for test in (ROOT / "tests").rglob("test_browser_*.py"):
        source = test.read_text(encoding="utf-8")
        if "DOCS_IMAGES" in source:
            taken |= set(re.findall(r'"([\w-]+\.png)"', source))
    assert sorted(shown - taken) == [], "pictures in the docs that no browser test takes"
    on_disk = {path.name for path in DOCS_IMAGES.glob("*.png")}
    assert sorted(on_disk - shown) == [], "pictures no page shows"
    assert set(PICTURES) <= shown
