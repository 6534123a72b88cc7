"""Filters for the design partials: a CausalBench scenario as safe HTML, perspective and connective labels."""

from django import template
from django.utils.translation import gettext as _

from ..design import perspective_label as _perspective_label
from ..render import render_scenario

register = template.Library()


@register.filter
def scenario_html(group):
    """The scenario of a CausalBench group, rendered by its domain (code highlighted, math as MathML)."""
    if group is None:
        return ""
    meta = group.metadata or {}
    return render_scenario(group.context, meta.get("domain", "text"), meta.get("code_language", ""))


@register.filter
def perspective_label(value) -> str:
    return _perspective_label(str(value or ""))


@register.filter
def domain_label(value) -> str:
    """A scenario's domain by name in the reader's language (``text`` when none is recorded)."""
    value = str(value or "text")
    return {"text": _("Text"), "math": _("Mathematics"), "code": _("Code")}.get(value, value)


@register.filter
def answer_label(value) -> str:
    return {"yes": _("Yes"), "no": _("No"), "reject": _("Rejected")}.get(str(value or ""), str(value or "—"))
