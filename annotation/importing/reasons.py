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
    # Results from elsewhere (evaluation.runs.imported).
    gettext_noop("no item column (item id or question text); map one, e.g. --columns item=COLUMN"),
    gettext_noop("no response column; map one, e.g. --columns response=COLUMN"),
    gettext_noop("no score column; map one, e.g. --columns score=COLUMN"),
    gettext_noop("no ranking column (ranking, or 1st, 2nd, …)"),
    gettext_noop(
        "cannot tell the kind of file from its columns (%(columns)s); name it responses=FILE, scores=FILE "
        "or rankings=FILE"
    ),
    gettext_noop("%(value)s matches no item of the release split (by id, external id or question text)"),
    gettext_noop("%(value)s is not a whole number from 1 to 100"),
    gettext_noop("no response of %(series)s to this item in the responses file"),
    gettext_noop("unknown criterion %(value)s (the project's: %(criteria)s, or none for one overall score)"),
    gettext_noop("unknown model %(value)s (the responses have: %(models)s)"),
    gettext_noop("unknown condition %(value)s (the responses have: %(conditions)s)"),
    gettext_noop(
        "say whose answer was scored: reference, or a model and condition (e.g. gpt-4o · class-agnostic)"
    ),
    gettext_noop("%(value)s is not a number"),
    gettext_noop("%(value)s is out of range (a whole number from %(low)s to %(high)s)"),
    gettext_noop("is empty"),
    gettext_noop("%(value)s: rank reference and the conditions of the responses (%(conditions)s)"),
    gettext_noop("%(value)s names a source twice, or differs from the order shown"),
    gettext_noop("no responses: give a file of model responses"),
    gettext_noop("the release belongs to another project"),
    gettext_noop(
        "a second response of %(what)s, other than %(other)s: choose to keep the first, the last or both"
    ),
    gettext_noop(
        "a second score of %(what)s, other than %(other)s: choose to keep the first, the last or both"
    ),
    gettext_noop(
        "a second ranking of %(what)s, other than %(other)s: choose to keep the first, the last or both"
    ),
    gettext_noop("repeats %(other)s (%(what)s); stored once"),
    gettext_noop("unknown field %(name)s in %(entry)s; the fields are: %(fields)s"),
    gettext_noop("write FIELD=COLUMN, e.g. %(example)s, not %(entry)s"),
    gettext_noop("%(entry)s: no file has a column %(column)s"),
    gettext_noop(
        "%(value)s is a yes/no value: say which value means a person, e.g. --values answer_by:False=person,True=MODEL"
    ),
    # JSON arrays, files of no known format
    gettext_noop("malformed JSON array after object %(number)s (%(error)s)"),
    gettext_noop("malformed JSON array before its first object (%(error)s)"),
    gettext_noop("the JSON array is not UTF-8 (byte %(byte)s)"),
    gettext_noop("the JSON array holds no object"),
    gettext_noop("the JSON nests deeper than %(depth)s levels"),
    gettext_noop("%(file)s: this is not a format the platform reads; use %(formats)s"),
    # the designs' readers of their authors' published files
    gettext_noop("must be a non-empty list of questions"),
    gettext_noop("a question is a JSON object"),
    gettext_noop("unknown ladder %(value)s (use Causal_Discovery, Intervention or Counterfactual)"),
    gettext_noop("is missing or empty (a question has option_0 to option_4)"),
    gettext_noop("must be the correct option's index, 0 to 4, not %(value)s"),
    gettext_noop("the file has no entries"),
    gettext_noop("the entry of this line of %(file)s is already in the project"),
    gettext_noop("the scenario of this row is already in the project"),
    gettext_noop("the item of this record of %(file)s is already in the project"),
    gettext_noop(
        "records of this file were written into the project by another import at the same moment; nothing was "
        "imported: import it again to see which rows are already in the project"
    ),
    gettext_noop("unknown question type %(value)s (use %(types)s)"),
    gettext_noop("names no cell (use a file name such as PS-AJ_cleaned.json or a cell column)"),
    gettext_noop("is missing or empty (a process-judging row shows a causal chain)"),
    gettext_noop("must be %(allowed)s, not %(value)s"),
    gettext_noop("the file has no rows"),
    gettext_noop("answer must be 1, 2, 3 or 4 (or A to D), not %(value)s"),
    gettext_noop("options must be a list of four non-empty texts"),
    gettext_noop("context is missing or empty"),
    gettext_noop("question is missing or empty"),
    gettext_noop("the project already has a seed with this id"),
    gettext_noop("the project already has a seed with this id (row %(row)s)"),
    gettext_noop(
        "%(value)s is a yes/no value: say which value means a natural question, "
        "e.g. --values origin:False=natural,True=MODEL"
    ),
)

# What a reason says in a page's terms where the stored text names a command-line flag: the page's own controls.
PAGE_WORDING = {
    "%(value)s is a yes/no value: say which value means a natural question, "
    "e.g. --values origin:False=natural,True=MODEL": gettext_noop(
        "%(value)s is a yes/no value: say which value means a natural question under “The file's own values”, "
        "e.g. origin:False=natural, origin:True=MODEL"
    ),
    "%(value)s is a yes/no value: say which value means a person, e.g. --values answer_by:False=person,True=MODEL": (
        gettext_noop(
            "%(value)s is a yes/no value: say which value means a person under “The file's own values”, e.g. "
            "answer_by:False=person, answer_by:True=MODEL"
        )
    ),
    "required column is missing (found columns: %(columns)s); map one, e.g. --columns question=COLUMN": (
        gettext_noop(
            "required column is missing (found columns: %(columns)s); choose the question's column under "
            "“Columns of the file”"
        )
    ),
    "no item column (item id or question text); map one, e.g. --columns item=COLUMN": gettext_noop(
        "no item column (item id or question text); choose it under “Columns”"
    ),
    "no response column; map one, e.g. --columns response=COLUMN": gettext_noop(
        "no response column; choose it under “Columns”"
    ),
    "no score column; map one, e.g. --columns score=COLUMN": gettext_noop(
        "no score column; choose it under “Columns”"
    ),
    "cannot tell the kind of file from its columns (%(columns)s); name it responses=FILE, scores=FILE "
    "or rankings=FILE": gettext_noop(
        "cannot tell the kind of file from its columns (%(columns)s); give it as Responses, Judge scores or "
        "Rankings, or choose its response, score or ranking column under “Columns”"
    ),
    "write FIELD=COLUMN, e.g. %(example)s, not %(entry)s": gettext_noop(
        "choose each column under “Columns” (%(entry)s cannot be read)"
    ),
}


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
    """The stored English reason in the active language, in a page's terms (as stored when no template
    matches)."""
    for pattern, template in _patterns():
        match = pattern.match(reason)
        if match:
            return gettext(PAGE_WORDING.get(template, template)) % match.groupdict()
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
