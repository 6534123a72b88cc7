"""The mapping step's view of a file: its columns, its first rows, and the mapping proposed for them."""

from contextlib import ExitStack
from itertools import islice

from django.utils.translation import gettext_lazy as _

from ..models import Project
from .errors import ImportFileError
from .mapping import FIELDS, QUESTIONS, propose, remembered
from .read import LabelResolver, json_value
from .reasons import row_error_translated
from .tables import UNREADABLE, open_table, unreadable

PREVIEW_ROWS = 5
FIELD_LABELS = {
    "question": _("Question"),
    "causal_class": _("Causal class"),
    "answer": _("Reference answer"),
    "answer_by": _("Who answered (person or a model's name)"),
    "source": _("Source"),
    "topic": _("Topic"),
    "id": _("Id"),
    "context": _("Context"),
    "expertise": _("Expertise"),
    "is_causal": _("Is causal (true/false)"),
}


def import_file_preview(*, project: Project, data: bytes, filename: str, sheet: str = "") -> dict:
    """``columns``, ``rows`` (the first five, as lists in column order), ``fields`` (each with the column
    proposed), ``class_values`` (the previewed class values and the label each matches), or ``problem``."""
    with ExitStack() as stack:
        try:
            table = open_table(data, filename, sheet=sheet, stack=stack)
            try:
                first = list(islice(table.rows, PREVIEW_ROWS))
            except UNREADABLE as exc:
                raise unreadable(exc) from exc
        except ImportFileError as exc:
            return {"problem": "; ".join(row_error_translated(error) for error in exc.errors)}
        columns = table.columns
    mapping = propose(columns, remembered(project, QUESTIONS))
    rows = [[json_value(record.get(column)) for column in columns] for _line, record in first]
    labels = LabelResolver(project.label_set, mapping.values.get("causal_class"))
    class_column = mapping.columns.get("causal_class")
    class_values = {}
    for _line, record in first:
        value = str(record.get(class_column) or "").strip() if class_column else ""
        if value:
            class_values[value] = labels.resolve(value) or ""
    return {
        "filename": filename,
        "format": table.format,
        "sheets": table.sheets,
        "sheet": sheet,
        "columns": columns,
        "rows": rows,
        "fields": [
            {"name": name, "label": FIELD_LABELS[name], "column": mapping.columns.get(name, "")}
            for name in FIELDS
        ],
        "mapped": set(mapping.columns.values()),
        "class_values": class_values,
        "values_text": ", ".join(
            f"{field}:{raw}={meaning}"
            for field, pairs in mapping.values.items()
            for raw, meaning in pairs.items()
        ),
    }
