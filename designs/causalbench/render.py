"""A CausalBench scenario as HTML: code highlighted by Pygments, math rendered to MathML, text escaped.

Everything runs on the server and needs no script or stylesheet on the page: Pygments writes
inline styles, browsers draw MathML natively. Whatever a person or a model wrote is escaped; the
only markup that reaches the page is what Pygments and latex2mathml produce, and the MathML is
passed through nh3 with a list of MathML elements and attributes, so even a hostile ``\\href``
or ``\\text{<script>}`` comes out as inert text.
"""

import re

import nh3
from django.utils.html import escape, linebreaks
from django.utils.safestring import SafeString, mark_safe
from latex2mathml.converter import convert as latex_to_mathml
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import JavaLexer, PythonLexer, get_lexer_by_name, guess_lexer
from pygments.util import ClassNotFound

MATHML_TAGS = {
    "math",
    "mrow",
    "mi",
    "mn",
    "mo",
    "ms",
    "mtext",
    "mspace",
    "msup",
    "msub",
    "msubsup",
    "mfrac",
    "msqrt",
    "mroot",
    "mover",
    "munder",
    "munderover",
    "mtable",
    "mtr",
    "mtd",
    "mstyle",
    "mpadded",
    "mphantom",
    "menclose",
    "semantics",
}
MATHML_ATTRIBUTES = {
    tag: {
        "xmlns",
        "display",
        "mathvariant",
        "stretchy",
        "fence",
        "form",
        "separator",
        "lspace",
        "rspace",
        "accent",
        "accentunder",
        "linethickness",
        "columnalign",
        "rowspacing",
        "columnspacing",
        "width",
        "height",
        "depth",
        "notation",
        "displaystyle",
        "scriptlevel",
        "minsize",
        "maxsize",
        "movablelimits",
        "largeop",
        "symmetric",
    }
    for tag in MATHML_TAGS
}
# $$…$$ (display) or $…$ (inline); a backslash-escaped dollar is text.
MATH = re.compile(r"(?<!\\)\$\$(.+?)(?<!\\)\$\$|(?<!\\)\$(.+?)(?<!\\)\$", re.DOTALL)
CODE_FORMATTER = HtmlFormatter(noclasses=True, nowrap=False, style="default", cssclass="code-scenario")


def render_scenario(text: str, domain: str, code_language: str = "") -> SafeString:
    if domain == "code":
        return render_code(text, code_language)
    if domain == "math":
        return render_math(text)
    return mark_safe(linebreaks(escape(text)))


def render_code(text: str, language: str = "") -> SafeString:
    """``language``: a Pygments lexer name (the scenario's ``code_language``); otherwise Python, unless the
    code looks like Java or Pygments recognises something else with confidence."""
    try:
        lexer = get_lexer_by_name(language) if language else _guess(text)
    except ClassNotFound:
        lexer = PythonLexer()
    # Pygments escapes the source itself; its own markup is spans with inline styles.
    return mark_safe(highlight(text, lexer, CODE_FORMATTER))


def _guess(text: str):
    if re.search(r"^\s*(def|import|from|class)\s.*:?\s*$", text, re.MULTILINE) and ";" not in text:
        return PythonLexer()
    if re.search(r"\b(public|private|void|new)\b", text) and ";" in text:
        return JavaLexer()
    lexer = guess_lexer(text)
    return PythonLexer() if lexer.name == "Text only" else lexer


def render_math(text: str) -> SafeString:
    """Prose escaped, each $…$ / $$…$$ converted to MathML (left as escaped source when it cannot be)."""
    parts, last = [], 0
    for match in MATH.finditer(text or ""):
        parts.append(escape(text[last : match.start()]))
        display = match.group(1) is not None
        source = match.group(1) if display else match.group(2)
        parts.append(math_html(source, display=display) or escape(match.group(0)))
        last = match.end()
    parts.append(escape((text or "")[last:]))
    return mark_safe(linebreaks("".join(parts), autoescape=False))


def math_html(source: str, *, display: bool = False) -> str:
    try:
        mathml = latex_to_mathml(source, display="block" if display else "inline")
    except Exception:  # noqa: BLE001 - an unknown command: show the source instead
        return ""
    return nh3.clean(
        mathml,
        tags=MATHML_TAGS,
        attributes=MATHML_ATTRIBUTES,
        url_schemes=set(),
        strip_comments=True,
        link_rel=None,
    )
