"""Drafts: an annotator's unsent ratings, vote, class, comment and answer, kept on the server per assignment.

The item page saves one as the person types (static/annotation/drafts.js) and fills the form from it on
reload. A draft counts only while its assignment is active: once submitted, skipped or expired it is
never shown again, so submitting needs no extra write.
"""

import json

from django.core.exceptions import ValidationError
from django.utils.translation import gettext as _

from .models import Assignment, Draft

MAX_BYTES = 50_000
TEXT_FIELDS = ("vote", "causal_class", "comment", "answer")


def draft_clean(data) -> dict:
    """Only the form's own fields, as strings; ratings as {criterion key: value}."""
    if not isinstance(data, dict):
        raise ValidationError(_("A draft is a set of form fields."))
    clean = {name: str(data[name])[:20_000] for name in TEXT_FIELDS if isinstance(data.get(name), (str, int))}
    ratings = data.get("ratings")
    if isinstance(ratings, dict):
        clean["ratings"] = {str(key)[:64]: str(value)[:8] for key, value in list(ratings.items())[:50]}
    if len(json.dumps(clean)) > MAX_BYTES:
        raise ValidationError(_("The draft is too long to keep."))
    return clean


def draft_save(*, assignment: Assignment, data) -> Draft | None:
    """Keep ``data`` as the assignment's draft; None when the assignment is no longer open."""
    clean = draft_clean(data)
    if assignment.status != Assignment.Status.ACTIVE:
        return None
    draft, _created = Draft.objects.update_or_create(assignment=assignment, defaults={"data": clean})
    return draft


def draft_for(assignment: Assignment | None) -> dict:
    if assignment is None or assignment.status != Assignment.Status.ACTIVE:
        return {}
    return Draft.objects.filter(assignment=assignment).values_list("data", flat=True).first() or {}
