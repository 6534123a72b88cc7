"""The mapping step's view of a file: its columns, its first rows, and the mapping proposed for them."""

from collections import Counter
from contextlib import ExitStack
from itertools import islice

from django.utils.translation import gettext_lazy as _

from ..models import Project
from .errors import ImportFileError
from .mapping import FIELDS, QUESTIONS, Mapping, fold, propose, remembered
from .read import FALSE_WORDS, TRUE_WORDS, UNTRANSLATED, AnswererResolver, LabelResolver, _text, json_value
from .reasons import row_error_translated
from .tables import UNREADABLE, open_table, unreadable

PREVIEW_ROWS = 5
SAMPLE_ROWS = 500  # the rows the proposal and the preview's values are read from
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


def sample_rows(
    data: bytes | None, filename: str, *, path=None, sheet: str = ""
) -> tuple[list[str], list[dict]]:
    """A file's columns and its first ``SAMPLE_ROWS`` rows (nothing when it cannot be read: the import says why)."""
    with ExitStack() as stack:
        try:
            table = open_table(data, filename, path=path, sheet=sheet, stack=stack)
            return table.columns, [record for _line, record in islice(table.rows, SAMPLE_ROWS)]
        except (ImportFileError, *UNREADABLE):
            return [], []


def proposed(project: Project, columns: list[str], sample: list[dict]):
    """The mapping proposed for a question import of ``project``: its last one, the names, the values."""
    return propose(columns, remembered(project, QUESTIONS), sample, list(project.label_set))


MAX_VALUES_SHOWN = 30


def _yes_no_meaning(value: str, words: dict) -> str | None:
    folded = fold(value)
    if folded in words:
        folded = fold(words[folded])
    return "true" if folded in TRUE_WORDS else "false" if folded in FALSE_WORDS else None


def value_previews(project: Project, mapping: Mapping, sample: list[dict]) -> tuple[list[dict], list[str]]:
    """Per mapped column whose values mean something (class, who answered, is causal): each distinct value of
    the sample, how many rows have it, and what it becomes (``problem``: it would be refused); and the model
    names who-answered would add to the project."""
    labels = LabelResolver(project.label_set, mapping.values.get("causal_class"))
    answerers = AnswererResolver(mapping.values.get("answer_by"))
    causal_words = {fold(raw): value for raw, value in mapping.values.get("is_causal", {}).items()}
    known_models = {fold(name) for name in known_model_names(project)}
    previews, new_models = [], set()
    for name in ("causal_class", "answer_by", "is_causal"):
        column = mapping.columns.get(name)
        if not column:
            continue
        counts = Counter(_text(record.get(column)) for record in sample)
        entries = []
        for value, count in sorted(counts.items(), key=lambda pair: (-pair[1], pair[0]))[:MAX_VALUES_SHOWN]:
            becomes, problem = "", False
            if name == "causal_class":
                label = labels.resolve(value) if value else None
                becomes = label or ""
                problem = bool(value) and label is None
            elif name == "answer_by":
                meaning = answerers.resolve(value)
                if meaning is UNTRANSLATED:
                    becomes, problem = str(_("say which value means a person")), True
                elif meaning is None:
                    becomes = str(_("a person")) if value else str(_("nobody said"))
                else:
                    becomes = (_("a model: %(name)s") % {"name": meaning}) if meaning else str(_("a model"))
                    if meaning and fold(meaning) not in known_models:
                        new_models.add(meaning)
            else:
                meaning = _yes_no_meaning(value, causal_words) if value else ""
                becomes = {"true": str(_("causal")), "false": str(_("not causal")), "": "—"}.get(meaning, "")
                problem = meaning is None
            entries.append({"value": value, "count": count, "becomes": becomes, "problem": problem})
        previews.append(
            {
                "field": name,
                "label": FIELD_LABELS[name],
                "column": column,
                "values": entries,
                "more": len(counts) > len(entries),
            }
        )
    return previews, sorted(new_models)


# Where model names come from besides the items themselves: the apps above annotation register a source
# (generation: the project's and the site's model endpoints), so this module imports none of them.
MODEL_NAME_SOURCES: list = []


def model_names_register(source) -> None:
    """``source(project)`` returns model names the project knows of (registered once, at start)."""
    if source not in MODEL_NAME_SOURCES:
        MODEL_NAME_SOURCES.append(source)


def known_model_names(project: Project) -> set[str]:
    """The model names the project has seen: its items' answering models and what the registered sources
    name (the project's and the site's endpoints)."""
    names = {
        model
        for model in project.items.exclude(answer_provenance={})
        .values_list("answer_provenance__model", flat=True)
        .distinct()[:1000]
        if isinstance(model, str)
    }
    for source in MODEL_NAME_SOURCES:
        names |= set(source(project))
    return names


def import_file_preview(
    *, project: Project, data: bytes, filename: str, sheet: str = "", chosen: Mapping | None = None
) -> dict:
    """``columns``, ``rows`` (the first five, as lists in column order), ``fields`` (each with the column
    proposed, or ``chosen`` on the page), ``class_values`` (the previewed class values and the label each
    matches), ``value_previews`` and ``new_models`` (what each value becomes), or ``problem``."""
    with ExitStack() as stack:
        try:
            table = open_table(data, filename, sheet=sheet, stack=stack)
            try:
                sample = [record for _line, record in islice(table.rows, SAMPLE_ROWS)]
            except UNREADABLE as exc:
                raise unreadable(exc) from exc
        except ImportFileError as exc:
            return {"problem": "; ".join(row_error_translated(error) for error in exc.errors)}
        columns = table.columns
    mapping = chosen if chosen is not None and chosen.columns else proposed(project, columns, sample)
    first = [(0, record) for record in sample[:PREVIEW_ROWS]]
    previews, new_models = value_previews(project, mapping, sample)
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
        "value_previews": previews,
        "new_models": new_models,
        "ignored": [column for column in columns if column not in mapping.columns.values()],
        "values_text": ", ".join(
            f"{field}:{raw}={meaning}"
            for field, pairs in mapping.values.items()
            for raw, meaning in pairs.items()
        ),
    }
