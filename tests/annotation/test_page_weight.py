"""The annotator's item page stays light: all its JavaScript and CSS together under 150 KB."""

import re
from pathlib import Path

import pytest
from django.contrib.staticfiles import finders
from django.urls import reverse

from annotation.queue import assignment_next
from tests.factories import ItemFactory

pytestmark = pytest.mark.django_db

BUDGET = 150 * 1024


def test_the_item_page_loads_under_150_kb_of_js_and_css_and_nothing_from_elsewhere(
    project, annotator, client
):
    ItemFactory(project=project)
    assignment = assignment_next(project=project, annotator=annotator)
    client.force_login(annotator)
    page = client.get(reverse("annotation:assignment", args=[project.slug, assignment.pk])).content.decode()

    assets = re.findall(r'<script[^>]+src="([^"]+)"', page) + re.findall(
        r'<link[^>]+href="([^"]+\.css)"', page
    )
    assert any("htmx" in url for url in assets) and any("keys.js" in url for url in assets)
    assert all(url.startswith("/static/") for url in assets), assets  # vendored, no CDN
    sizes = {url: Path(finders.find(url.removeprefix("/static/"))).stat().st_size for url in assets}
    assert sum(sizes.values()) < BUDGET, sizes
    assert "<script>" not in page  # no inline code either: everything is in the vendored files
