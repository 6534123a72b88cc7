"""Small formatting filters for the annotation pages."""

from django import template
from django.utils.formats import number_format

from annotation.importing.reasons import reason_translated

register = template.Library()


@register.filter
def class_name(label, project) -> str:
    """A causal class label as the reader reads it: ``{{ item.causal_class|class_name:project }}``."""
    from annotation.labels import class_label

    return class_label(project, label) if label else "—"


@register.filter
def criterion_name(key, project) -> str:
    """A rating criterion's name in the reader's language, from its key."""
    from annotation.labels import criterion_label

    criterion = next((c for c in project.criteria if c["key"] == key), {"key": key})
    return criterion_label(criterion)


@register.filter
def percent(value) -> str:
    """0.667 → "67%"; None → "—"."""
    if value is None or value == "":
        return "—"
    return f"{round(float(value) * 100)}%"


@register.filter
def one_decimal(value) -> str:
    """A mean rating with one decimal, or "—" when there is none."""
    if value is None or value == "":
        return "—"
    return number_format(round(float(value), 1), 1)  # number_format cuts; it does not round


@register.filter
def vote_label(value) -> str:
    """A vote's name in the interface language ("accept" → "Accept")."""
    from annotation.models import Judgment

    try:
        return Judgment.Vote(value).label
    except ValueError:
        return value or "—"


@register.filter
def design_nav(project) -> str:
    """The template of the links to the project's design's own pages, or "" (``ProjectDesign.nav_partial``)."""
    from ..designs import design_for

    try:
        return design_for(project).nav_partial
    except LookupError:
        return ""


@register.filter
def import_reason(reason) -> str:
    """An import-funnel reason, stored in English, in the reader's language."""
    return reason_translated(str(reason or ""))


@register.filter
def answer_format_name(value) -> str:
    """An answer format's name in the reader's language (``rating`` → "Rating scale")."""
    from annotation.models import Project

    try:
        return str(Project.AnswerFormat(value).label)
    except ValueError:
        return value
