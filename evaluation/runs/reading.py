"""A report as its reader reads it: class, criterion and condition keys in the page's language.

The tables keep the raw keys (their CSV and the API are read by programs); pages show these names instead."""

from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from annotation.labels import class_label, criterion_label

from .conditions import REFERENCE

CONDITION_NAMES = {
    "zero-shot": gettext_lazy("zero-shot"),
    "few-shot": gettext_lazy("few-shot"),
    "chain-of-thought": gettext_lazy("chain of thought"),
    "class-agnostic": gettext_lazy("class-agnostic"),
    "class-informed": gettext_lazy("class-informed"),
    REFERENCE: gettext_lazy("reference answer"),
}
SEPARATOR = " · "


def condition_name(name: str) -> str:
    return str(CONDITION_NAMES.get(name, name))


def series_name(series: str) -> str:
    """ "model · condition" with the condition named for the reader (the model's name stays)."""
    if not isinstance(series, str) or SEPARATOR not in series:
        return condition_name(series) if isinstance(series, str) else series
    head, _sep, last = series.rpartition(SEPARATOR)
    return f"{head}{SEPARATOR}{condition_name(last)}"


def criterion_name(project, key: str) -> str:
    criterion = next((c for c in project.criteria if c["key"] == key), None)
    return criterion_label(criterion) if criterion else key


def author_name(value: str) -> str:
    return {"human": _("people"), "model": _("a model")}.get(value, value)


def reader_value(project, column: str, value):
    if not isinstance(value, str) or not value:
        return value
    if column == "class":
        return class_label(project, value)
    if column == "criterion":
        return criterion_name(project, value)
    if column in ("series", "source", "condition"):
        return series_name(value)
    if column == "answer_by":
        return author_name(value)
    return value


def reader_heading(project, column: str, heading: str) -> str:
    """A column headed by a criterion's key (the judge's table) is headed by its name."""
    if column == heading and column in project.criterion_keys:
        return criterion_name(project, column)
    return heading


def reader_text(project):
    """For a plot: a class key becomes the class's name, a "model · condition" its condition's name."""

    def shown(text):
        if isinstance(text, str) and text in project.label_set:
            return class_label(project, text)
        return series_name(text) if isinstance(text, str) else str(text)

    return shown
