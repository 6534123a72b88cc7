"""Turn what a model wrote into JSON and check it against the template's schema.

Models that cannot do structured output wrap JSON in prose, code fences or reasoning tags;
``extract_json`` finds the first JSON value that parses. ``validation_error`` names what
is wrong and where, in words the model can act on when asked again.
"""

import json
import re
from functools import lru_cache

from jsonschema import Draft202012Validator
from jsonschema.exceptions import relevance

_THINKING = re.compile(r"<think(?:ing)?>.*?</think(?:ing)?>", re.DOTALL | re.IGNORECASE)
_FENCE = re.compile(r"```(?:json|JSON)?\s*\n(.*?)```", re.DOTALL)


class NoJSONFound(ValueError):
    pass


def extract_json(text: str):
    """The JSON value in ``text``: the whole text, else a fenced block, else the first object or array."""
    text = _THINKING.sub("", text or "").strip()
    if not text:
        raise NoJSONFound("the reply was empty")
    try:
        return json.loads(text)
    except ValueError:
        pass
    for block in _FENCE.findall(text):
        try:
            return json.loads(block)
        except ValueError:
            continue
    decoder = json.JSONDecoder()
    first_error = None
    for match in re.finditer(r"[{\[]", text):
        try:
            value, _end = decoder.raw_decode(text, match.start())
            return value
        except ValueError as exc:
            first_error = first_error or exc
    if first_error is not None:
        raise NoJSONFound(f"the reply is not valid JSON ({first_error})")
    raise NoJSONFound("the reply contains no JSON object")


def coerce_root(value, schema: dict):
    """A bare array where the schema wants an object holding one array: wrap it under that key."""
    if not isinstance(value, list) or schema.get("type") != "object":
        return value
    arrays = [key for key, spec in (schema.get("properties") or {}).items() if spec.get("type") == "array"]
    required = schema.get("required") or []
    if len(arrays) == 1 and set(required) <= set(arrays):
        return {arrays[0]: value}
    return value


@lru_cache(maxsize=64)
def _validator(schema_json: str) -> Draft202012Validator:
    return Draft202012Validator(json.loads(schema_json))


def validator_for(schema: dict) -> Draft202012Validator:
    return _validator(json.dumps(schema, sort_keys=True))


def validation_error(value, schema: dict, limit: int = 3) -> str | None:
    """None when ``value`` matches ``schema``; otherwise the (at most ``limit``) problems, each with its place."""
    if not schema:
        return None
    errors = sorted(validator_for(schema).iter_errors(value), key=relevance, reverse=True)
    if not errors:
        return None
    problems = []
    for error in errors[:limit]:
        where = "/".join(str(part) for part in error.absolute_path) or "(top level)"
        problems.append(f"at {where}: {error.message}")
    more = f" (and {len(errors) - limit} more)" if len(errors) > limit else ""
    return "; ".join(problems) + more
