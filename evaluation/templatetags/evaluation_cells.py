"""``{% has_cell_table project as flag %}``: whether the project's design breaks agreement down by two fields,
so its kappa-per-cell table (CausalityCheck's Table 3) exists."""

from django import template

from annotation.designs import design_for

register = template.Library()


@register.simple_tag
def has_cell_table(project) -> bool:
    try:
        return len(design_for(project).agreement_fields()) >= 2
    except LookupError:
        return False
