"""Word-level differences between two versions of an item, as segments a template renders and escapes.

A segment is ``(op, text)`` with op ``"equal"``, ``"delete"`` or ``"insert"``; no HTML is built here.
"""

import re
from difflib import SequenceMatcher

from django.utils.translation import gettext_lazy as _

FIELD_LABELS = {
    "question": _("Question"),
    "context": _("Context"),
    "reference_answer": _("Answer"),
    "causal_class": _("Causal class"),
}
OPTION_FIELDS = ("text", "role", "rationale")
_TOKENS = re.compile(r"\s+|\w+|[^\w\s]", re.UNICODE)


def text_diff(old: str, new: str) -> list[tuple[str, str]]:
    """Segments turning ``old`` into ``new``, word by word (whitespace and punctuation are tokens too)."""
    old_tokens, new_tokens = _TOKENS.findall(old or ""), _TOKENS.findall(new or "")
    segments: list[tuple[str, str]] = []
    matcher = SequenceMatcher(None, old_tokens, new_tokens, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            _append(segments, "equal", "".join(old_tokens[i1:i2]))
            continue
        if tag in ("delete", "replace"):
            _append(segments, "delete", "".join(old_tokens[i1:i2]))
        if tag in ("insert", "replace"):
            _append(segments, "insert", "".join(new_tokens[j1:j2]))
    return segments


def snapshot_diff(before: dict | None, after: dict) -> list[dict]:
    """The changed fields between two item snapshots: [{"label", "segments"}], options one by one."""
    before = before or {}
    changes = []
    for field, label in FIELD_LABELS.items():
        if before.get(field, "") != after.get(field, ""):
            changes.append(
                {"label": label, "segments": text_diff(before.get(field, ""), after.get(field, ""))}
            )
    old_options = {option["position"]: option for option in before.get("options", [])}
    new_options = {option["position"]: option for option in after.get("options", [])}
    for position in sorted(set(old_options) | set(new_options)):
        old, new = old_options.get(position, {}), new_options.get(position, {})
        letter = chr(ord("A") + position)
        for field in OPTION_FIELDS:
            if old.get(field, "") != new.get(field, ""):
                changes.append(
                    {
                        "label": _option_label(letter, field),
                        "segments": text_diff(old.get(field, ""), new.get(field, "")),
                    }
                )
    return changes


def _option_label(letter: str, field: str) -> str:
    names = {"text": _("text"), "role": _("role"), "rationale": _("rationale")}
    return _("Option %(letter)s, %(field)s") % {"letter": letter, "field": names[field]}


def _append(segments: list, op: str, text: str) -> None:
    if not text:
        return
    if segments and segments[-1][0] == op:
        segments[-1] = (op, segments[-1][1] + text)
    else:
        segments.append((op, text))
