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


@register.filter
def condition_names(conditions) -> str:
    """A run's prompting conditions, named for the reader."""
    from evaluation.runs.reading import condition_name

    return ", ".join(condition_name(name) for name in conditions or [])


@register.filter
def reader_rows(table, project):
    """A report table's rows with class, criterion and condition keys named for the reader."""
    from evaluation.runs.reading import reader_value

    keys = [key for key, _label in table.columns]
    return [
        [reader_value(project, key, value) for key, value in zip(keys, row, strict=True)]
        for row in table.cells
    ]


@register.filter
def reader_headings(table, project):
    from evaluation.runs.reading import reader_heading

    return [reader_heading(project, key, label) for key, label in table.columns]
