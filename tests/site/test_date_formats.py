"""One date format per language: English pages read "24 Nov 2026, 14:05", Portuguese ones "24/11/2026 14:05"."""

from datetime import UTC, datetime, timezone

import pytest
from django.utils import formats, translation

MOMENT = datetime(2026, 11, 24, 14, 5, tzinfo=UTC)


@pytest.mark.parametrize(
    ("language", "expected"), [("en", "24 Nov 2026, 14:05"), ("pt-br", "24/11/2026 14:05")]
)
def test_every_date_and_time_format_of_a_language_reads_the_same(language, expected):
    with translation.override(language):
        shown = {
            name: formats.date_format(MOMENT, name) for name in ("DATETIME_FORMAT", "SHORT_DATETIME_FORMAT")
        }
        day = {name: formats.date_format(MOMENT, name) for name in ("DATE_FORMAT", "SHORT_DATE_FORMAT")}
    assert set(shown.values()) == {expected}, shown
    assert set(day.values()) == {expected.split(",")[0].split(" 14")[0]}, day
