"""Names of a project's criteria and causal labels in the reader's language.

A criterion names itself in English (``label``) and Brazilian Portuguese (``label_pt``); a project's
``label_names`` names each class label in both. What a project leaves unnamed falls back to the
interface's own catalogue (Pearl's three rungs, the default criteria) and then to the key itself.
"""

from django.utils.translation import get_language, gettext, gettext_noop

# The default criteria and rungs, in the catalogue for projects made before they carried both names.
CATALOGUE_NAMES = {
    "Adherence to the question": gettext_noop("Adherence to the question"),
    "Fluency and correctness": gettext_noop("Fluency and correctness"),
    "Coherence and logical progression": gettext_noop("Coherence and logical progression"),
    "Relevance and objectivity": gettext_noop("Relevance and objectivity"),
}
LANGUAGES = ("en", "pt-BR")


def reading_portuguese() -> bool:
    return (get_language() or "en").lower().startswith("pt")


def criterion_label(criterion: dict) -> str:
    english = criterion.get("label") or criterion["key"]
    if reading_portuguese():
        return criterion.get("label_pt") or gettext(CATALOGUE_NAMES.get(english, english))
    return english


def class_label(project, label: str) -> str:
    """The class label ``label`` of ``project`` as the reader reads it."""
    from .forms import PEARL_LABEL_NAMES

    names = (getattr(project, "label_names", None) or {}).get(label) or {}
    name = names.get("pt-BR") if reading_portuguese() else names.get("en")
    if name:
        return name
    from .designs import design_for

    try:
        design_name = design_for(project).label_names().get(label)
    except LookupError:
        design_name = None
    return str(design_name or PEARL_LABEL_NAMES.get(label, label))


def criteria_for_reader(criteria: list[dict]) -> list[dict]:
    """The criteria with ``label`` in the reader's language (for code that shows ``label`` as it is)."""
    return [{**criterion, "label": criterion_label(criterion)} for criterion in criteria]
