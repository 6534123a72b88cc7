"""Prompt rendering: ``{{ name }}`` placeholders filled from a dict, and optional sections.

``{{#name}}...{{/name}}`` keeps its text only when ``name`` is not empty, ``{{^name}}...{{/name}}``
only when it is (so "Context: ..." disappears for an item without context).

Deliberately not Django's template language: prompts are data, a missing variable is an
error (never a silent blank), and model-facing text must not be HTML-escaped.
"""

import json
import re
from functools import lru_cache

PLACEHOLDER = re.compile(r"\{\{\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\}\}")
SECTION = re.compile(r"\{\{([#^])\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\}\}(.*?)\{\{/\s*\2\s*\}\}", re.DOTALL)
SECTION_NAME = re.compile(r"\{\{[#^/]\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\}\}")


class MissingVariables(KeyError):
    def __init__(self, names: list[str]):
        self.names = names
        super().__init__(f"the prompt needs {', '.join(names)}")

    def __str__(self) -> str:
        return self.args[0]


@lru_cache(maxsize=256)
def placeholders(text: str) -> list[str]:
    text = text or ""
    return sorted(set(PLACEHOLDER.findall(text)) | set(SECTION_NAME.findall(text)))


def render(text: str, variables: dict) -> str:
    missing = [name for name in placeholders(text) if name not in variables]
    if missing:
        raise MissingVariables(missing)

    def section(match):
        negated, name, body = match.group(1) == "^", match.group(2), match.group(3)
        return body if bool(variables[name]) != negated else ""

    text = text or ""
    while True:  # sections may nest: resolve the outer ones, then what they uncovered
        resolved = SECTION.sub(section, text)
        if resolved == text:
            break
        text = resolved
    return PLACEHOLDER.sub(lambda match: _as_text(variables[match.group(1)]), text)


def _as_text(value) -> str:
    if value is None:
        return ""
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False, indent=2)
    return str(value)


def schema_instruction(schema: dict) -> str:
    """Appended to the prompt when the endpoint cannot be asked for structured output."""
    return (
        "Reply with only one JSON value, no prose around it, that validates against this JSON schema:\n"
        f"```json\n{json.dumps(schema, ensure_ascii=False)}\n```"
    )


def build_messages(*, system: str, user: str, schema: dict | None, structured: bool) -> list[dict]:
    messages = []
    if system.strip():
        messages.append({"role": "system", "content": system.strip()})
    content = user.strip()
    if schema and not structured:
        content = f"{content}\n\n{schema_instruction(schema)}"
    messages.append({"role": "user", "content": content})
    return messages
