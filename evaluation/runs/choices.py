"""Reading the chosen option out of what a model wrote: a letter (also after chain-of-thought text), or yes/no.

``None`` means the answer could not be read; it then counts as wrong, and is counted apart.
"""

import re
import unicodedata

# "The answer is (B)", "Resposta: C", "Option D", "**A**" — the last such statement wins, since
# reasoning often weighs options before it concludes.
_STATED = re.compile(
    r"(?:answer|resposta|op[çc][aã]o|option|alternativa|choice|escolha)\s*(?:final\s*)?(?:is|é|e|:|=|-)?\s*"
    r"(?:the\s+|a\s+|letra\s+|letter\s+|option\s+|op[çc][aã]o\s+)*[\(\[\*\"']*([A-Z])\b(?![a-zA-Z'])",
    re.IGNORECASE,
)
_BARE = re.compile(r"^\W*([A-Z])\W*$", re.IGNORECASE)
_LEADING = re.compile(r"^\W*([A-Z])(?:[\)\].:\-]|\s*$|\s+[-–—:]|\s+\()")
_STANDALONE = re.compile(r"(?<![A-Za-z'])[\(\[\*]*([A-Z])[\)\]\*]*(?![A-Za-z'])")

YES = {"yes", "sim", "true", "verdadeiro", "y", "s"}
NO = {"no", "nao", "não", "false", "falso", "n"}


def parse_choice(answer: str, letters: list[str], reasoning: str = "") -> str | None:
    """The letter an answer chose among ``letters``, or None when it names none or several."""
    allowed = {letter.upper() for letter in letters}
    text = (answer or "").strip()
    for pattern in (_BARE, _LEADING):
        match = pattern.match(text)
        if match and match.group(1).upper() in allowed and (pattern is _BARE or match.group(1).isupper()):
            return match.group(1).upper()
    for source in (text, reasoning or ""):
        stated = [m.group(1).upper() for m in _STATED.finditer(source) if m.group(1).upper() in allowed]
        if stated:
            return stated[-1]
    standalone = {m.group(1) for m in _STANDALONE.finditer(text) if m.group(1) in allowed}
    # One capital letter on its own names the option; none or several (or only the option's text) do not.
    return standalone.pop() if len(standalone) == 1 else None


def _plain(text: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFKD", text.lower()) if not unicodedata.combining(c))


def parse_yes_no(answer: str, reasoning: str = "") -> str | None:
    """ "yes" or "no" (Portuguese and English, any case or accent): the first word when it is one, else the
    only one said, else the last one the reasoning states; None when it cannot be told."""
    words = re.findall(r"[a-z]+", _plain(answer or ""))
    plain_yes, plain_no = {_plain(w) for w in YES}, {_plain(w) for w in NO}
    if words and words[0] in plain_yes | plain_no and not (len(words) > 1 and words[0] in ("s", "n", "y")):
        return "yes" if words[0] in plain_yes else "no"
    said = {("yes" if w in plain_yes else "no") for w in words if w in (plain_yes | plain_no) and len(w) > 1}
    if len(said) == 1:
        return said.pop()
    stated = re.findall(r"(?:answer|resposta)\s*(?:final\s*)?(?:is|e|:)?\s*([a-z]+)", _plain(reasoning or ""))
    stated = [w for w in stated if w in plain_yes | plain_no]
    if stated:
        return "yes" if stated[-1] in plain_yes else "no"
    return None


def yes_no_gold(record: dict) -> str | None:
    """The right answer of a yes/no item: its correct option's text, else its reference answer."""
    for option in record.get("options") or []:
        if option.get("role") == "correct":
            return parse_yes_no(option.get("text", ""))
    return parse_yes_no(record.get("answer", ""))
