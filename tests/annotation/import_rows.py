"""The import's rows one at a time, for tests that compare the column-wise check with a row-by-row reading."""

from collections.abc import Iterable, Mapping

from annotation.importing.read import LabelResolver, RowChecker, RowError, SourceRow, UnknownValues
from annotation.importing.tables import records_as_columns


def read_rows(
    records: Iterable[tuple[int, dict]],
    columns: list[str],
    mapping: Mapping,
    labels: LabelResolver,
    errors: list[RowError],
    unknown: UnknownValues,
) -> list[SourceRow]:
    """Check each record through ``mapping`` as the import does; good rows are returned, problems appended to
    ``errors``."""
    check = RowChecker(mapping, columns, labels, errors, unknown)
    rows = check(*records_as_columns(list(records), check.wanted))
    return [
        SourceRow(**{**dict(zip(rows.FIELDS, values)), "metadata": values[-1] or {}})
        for values in zip(*(getattr(rows, name) for name in rows.FIELDS))
    ]
