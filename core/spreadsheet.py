"""CSV that is safe to open in a spreadsheet, streamed row by row: the one CSV writer of every download (the
release's data files apply the same rule column by column, ``evaluation.releases.export.neutralise_column``)."""

import csv
from collections.abc import Iterable, Sequence
from decimal import Decimal

from django.http import StreamingHttpResponse

FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")


def neutralise_formula(value) -> str:
    """Spreadsheet programs run cells that start with = + - @ as formulas; prefix those with '. Numbers are
    numbers (a negative κ stays -0.12): only text can carry a formula."""
    if isinstance(value, (int, float, Decimal)) and not isinstance(value, bool):
        return str(value)
    text = "" if value is None else str(value)
    return "'" + text if text.startswith(FORMULA_PREFIXES) else text


class _Echo:
    def write(self, value):
        return value


def csv_lines(header: Sequence[str], rows: Iterable[Sequence]) -> Iterable[str]:
    writer = csv.writer(_Echo())
    yield writer.writerow([neutralise_formula(name) for name in header])  # headers may be curators' names
    for row in rows:
        yield writer.writerow([neutralise_formula(value) for value in row])


def csv_response(filename: str, header: Sequence[str], rows: Iterable[Sequence]) -> StreamingHttpResponse:
    response = StreamingHttpResponse(csv_lines(header, rows), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response
