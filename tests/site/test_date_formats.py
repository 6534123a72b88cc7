"""One date format per language, every time with its zone: English pages read "24 Nov 2026, 14:05 UTC",
Portuguese ones "24/11/2026 14:05 UTC" (for a moment in UTC; the site's zone otherwise)."""

from datetime import UTC, datetime, timezone

import pytest
from django.utils import formats, translation

MOMENT = datetime(2026, 11, 24, 14, 5, tzinfo=UTC)


@pytest.mark.parametrize(
    ("language", "expected"), [("en", "24 Nov 2026, 14:05 UTC"), ("pt-br", "24/11/2026 14:05 UTC")]
)
def test_every_date_and_time_format_of_a_language_reads_the_same(language, expected):
    with translation.override(language):
        shown = {
            name: formats.date_format(MOMENT, name) for name in ("DATETIME_FORMAT", "SHORT_DATETIME_FORMAT")
        }
        day = {name: formats.date_format(MOMENT, name) for name in ("DATE_FORMAT", "SHORT_DATE_FORMAT")}
    assert set(shown.values()) == {expected}, shown
    assert set(day.values()) == {expected.split(",")[0].split(" 14")[0]}, day


def test_a_page_shows_a_time_in_the_sites_zone_and_names_the_zone():
    from django.template import Context, Template
    from django.utils import timezone as django_timezone

    with translation.override("en"), django_timezone.override("America/Sao_Paulo"):
        shown = Template("{{ moment|date:'SHORT_DATETIME_FORMAT' }} · {{ moment }}").render(
            Context({"moment": MOMENT})
        )
    assert shown == "24 Nov 2026, 11:05 -03 · 24 Nov 2026, 11:05 -03"
