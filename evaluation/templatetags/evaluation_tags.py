from django import template

register = template.Library()


@register.filter
def cell(value):
    """A figure of a report table: floats to three decimals, nothing as a dash."""
    if value is None or value == "":
        return "—"
    if isinstance(value, bool):
        return "✓" if value else "✗"
    if isinstance(value, float):
        return f"{value:.3f}"
    return value
