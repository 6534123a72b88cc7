"""Import-funnel reasons in the reader's language.

Reasons are stored in English (the import log, the CSV of dropped rows and the API keep one language); a page
translates each at display time: the stored text is matched against the message templates below, and the
template's pt-BR translation is filled with the same values. A reason that matches no template is shown as
stored. A new reason written in the importer gets its template here and its entry in the catalogue."""

import re
from functools import cache

from django.utils.translation import gettext, gettext_noop

# Most specific first: the first template that matches the whole reason wins.
TEMPLATES = (
    gettext_noop("is missing or empty"),
    gettext_noop("is %(size)s characters long (limit %(limit)s)"),
    gettext_noop("unknown class %(value)s (expected one of: %(allowed)s)"),
    gettext_noop("%(value)s is not a boolean (use true/false)"),
    gettext_noop(
        "required column is missing (found columns: %(columns)s); map one, e.g. --columns question=COLUMN"
    ),
    gettext_noop("the file has no rows after its header"),
    gettext_noop("is empty; an item imported as reviewed needs its answer"),
    gettext_noop("%(size)s characters (at most %(limit)s)"),
    gettext_noop("contains a NUL byte"),
    gettext_noop("is_causal is false"),
    gettext_noop("same text as line %(line)s"),
    gettext_noop("same id as line %(line)s"),
    gettext_noop("same text as item #%(item)s"),
    gettext_noop("same id as item #%(item)s"),
    gettext_noop("%(words)s words (fewer than %(limit)s)"),
    gettext_noop("%(words)s words (more than %(limit)s = Q3 + 1.5·IQR)"),
    gettext_noop("the file could not be read to its end (%(error)s); is it damaged or cut short?"),
    gettext_noop("the file starts as UTF-16 but is not valid UTF-16"),
    gettext_noop("the file is empty"),
    gettext_noop("invalid UTF-8 (byte 0x%(byte)s at column %(column)s)"),
    gettext_noop("malformed JSON (%(error)s at column %(column)s)"),
    gettext_noop("the JSON is nested too deeply"),
    gettext_noop("expected a JSON object, found %(kind)s"),
    gettext_noop("unreadable CSV header (%(error)s)"),
    gettext_noop("unreadable CSV row (%(error)s)"),
    gettext_noop("%(cells)s cells but the header has %(columns)s columns"),
    gettext_noop("unreadable spreadsheet (%(error)s)"),
    gettext_noop("no sheet %(sheet)s (the sheets are: %(sheets)s)"),
    gettext_noop("the workbook has no sheet"),
    gettext_noop("the sheet %(sheet)s is empty"),
    gettext_noop("unreadable Parquet file (%(error)s)"),
    gettext_noop("unreadable Arrow file (%(error)s)"),
    gettext_noop("the folder holds no data file; use %(formats)s"),
    gettext_noop("unknown field(s) %(unknown)s; the fields are: %(fields)s"),
    gettext_noop("%(field)s=%(column)s: the file has no column %(quoted)s (its columns: %(columns)s)"),
    gettext_noop("column(s) mapped to two fields: %(columns)s"),
    gettext_noop(
        "the import stopped %(times)s times without finishing (its worker died); upload the file again, "
        "or split it"
    ),
    # JSON arrays, files of no known format
    gettext_noop("malformed JSON array after object %(number)s (%(error)s)"),
    gettext_noop("malformed JSON array before its first object (%(error)s)"),
    gettext_noop("the JSON array is not UTF-8 (byte %(byte)s)"),
    gettext_noop("the JSON array holds no object"),
    gettext_noop("%(file)s: this is not a format the platform reads; use %(formats)s"),
    # the designs' readers of their authors' published files
    gettext_noop("must be a non-empty list of questions"),
    gettext_noop("a question is a JSON object"),
    gettext_noop("unknown ladder %(value)s (use Causal_Discovery, Intervention or Counterfactual)"),
    gettext_noop("is missing or empty (a question has option_0 to option_4)"),
    gettext_noop("must be the correct option's index, 0 to 4, not %(value)s"),
    gettext_noop("the file has no entries"),
    gettext_noop("the entry of this line of %(file)s is already in the project"),
    gettext_noop("unknown question type %(value)s (use %(types)s)"),
    gettext_noop("is empty"),
    gettext_noop("names no cell (use a file name such as PS-AJ_cleaned.json or a cell column)"),
    gettext_noop("is missing or empty (a process-judging row shows a causal chain)"),
    gettext_noop("must be %(allowed)s, not %(value)s"),
    gettext_noop("the file has no rows"),
)


@cache
def _patterns() -> tuple[tuple[re.Pattern, str], ...]:
    patterns = []
    for template in TEMPLATES:
        parts = re.split(r"%\((\w+)\)s", template)
        regex = "".join(
            f"(?P<{part}>.*?)" if index % 2 else re.escape(part) for index, part in enumerate(parts)
        )
        patterns.append((re.compile(f"^{regex}$", re.DOTALL), template))
    return tuple(patterns)


def reason_translated(reason: str) -> str:
    """The stored English reason in the active language (as stored when no template matches)."""
    for pattern, template in _patterns():
        match = pattern.match(reason)
        if match:
            return gettext(template) % match.groupdict()
    return reason


def row_error_translated(error) -> str:
    """A ``RowError`` (or its dict) as a reader reads it: "linha 3, question: …" in pt-BR."""
    line, field, reason = (
        (error["line"], error["field"], error["reason"])
        if isinstance(error, dict)
        else (error.line, error.field, error.reason)
    )
    where = gettext("line %(line)s") % {"line": line} if line else gettext("file")
    return (
        f"{where}, {field}: {reason_translated(reason)}" if field else f"{where}: {reason_translated(reason)}"
    )
