"""Prompt templates: the defaults shipped as data files, their immutable versions, and lookup.

A version is never changed: loading a data file whose text or schema differs from the
latest version stores a new version; editing one in the admin does the same.
"""

from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import yaml
from django.db import transaction
from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from ..llm.prompts import placeholders
from ..models import PromptTemplate

TEMPLATE_DIR = Path(__file__).resolve().parent.parent / "prompt_templates"
Kind = PromptTemplate.Kind

# What each kind of template is given; a template may use any of them and nothing else.
VARIABLES = {
    Kind.QUESTIONS: {
        "count",
        "causal_class",
        "class_definition",
        "class_definitions",
        "topic",
        "topic_words",
        "examples",
        "language",
    },
    Kind.ANSWER: {"question", "context", "causal_class", "class_description", "language"},
    Kind.BENCHMARK_ANSWER: {
        "question",
        "context",
        "causal_class",
        "class_description",
        "language",
        "options",
        "letters",
        "examples",
    },
    Kind.DISTRACTORS: {"question", "context", "question_type", "correct_option", "causal_class", "language"},
    Kind.REVISION: {"question", "context", "causal_class", "answer", "feedback", "language"},
    Kind.JUDGE_SCORE: {"question", "context", "answer", "reference", "criteria", "causal_class", "language"},
    Kind.JUDGE_RANKING: {"question", "context", "answers", "labels", "causal_class", "language"},
    # the designs' kinds add theirs (``template_kind_register``)
}
# The key(s) of the model's output each kind of job reads: a template's schema must declare them (as required
# properties), or every output would parse and still give nothing. CausalityCheck's checklist reads
# different keys per template name and is checked by its own step table.
OUTPUT_KEYS = {
    Kind.QUESTIONS: ("questions",),
    Kind.ANSWER: ("answer",),
    Kind.BENCHMARK_ANSWER: ("answer",),
    Kind.DISTRACTORS: ("contradictory", "unfounded", "reversal", "irrelevant"),
    Kind.REVISION: ("answer",),
    Kind.JUDGE_SCORE: ("scores",),
    Kind.JUDGE_RANKING: ("ranking",),
    # the designs' kinds add theirs (``JobKind.output_keys``)
}
CONTENT_FIELDS = ("system", "user", "output_schema")
# The variant a job of each kind uses unless told otherwise.
DEFAULT_NAMES = {Kind.ANSWER: "class-agnostic"}


def template_kind_register(kind: str, *, variables, default_name: str = "default", output_keys=()) -> None:
    """What templates of a registered job kind may use and must declare (``generation.kinds.job_kind_register``
    calls this)."""
    if variables:
        VARIABLES[kind] = set(variables)
    if output_keys:
        OUTPUT_KEYS[kind] = tuple(output_keys)
    if default_name != "default":
        DEFAULT_NAMES[kind] = default_name


class TemplateProblem(ValueError):
    pass


@dataclass
class LoadReport:
    created: list[PromptTemplate] = field(default_factory=list)
    unchanged: int = 0


def template_check(*, kind: str, system: str, user: str, output_schema: dict) -> None:
    """Raise TemplateProblem naming an unknown kind or placeholder, or an invalid schema."""
    if kind not in VARIABLES and kind not in Kind.values:
        raise TemplateProblem(
            f"unknown kind {kind!r}; known: {', '.join(sorted({*VARIABLES, *Kind.values}))}"
        )
    allowed = VARIABLES.get(kind)
    if allowed is not None:
        unknown = sorted(set(placeholders(system) + placeholders(user)) - allowed)
        if unknown:
            raise TemplateProblem(
                f"unknown placeholder(s) {', '.join(unknown)} for a {kind} template; "
                f"available: {', '.join(sorted(allowed))}"
            )
    if not isinstance(output_schema, dict) or not output_schema:
        raise TemplateProblem("the output schema must be a JSON object (a JSON schema)")
    try:
        Draft202012Validator.check_schema(output_schema)
    except SchemaError as exc:
        raise TemplateProblem(f"the output schema is not a valid JSON schema: {exc.message}") from exc
    expected = OUTPUT_KEYS.get(kind, ())
    declared = set(output_schema.get("properties") or {}) & set(output_schema.get("required") or [])
    missing = [key for key in expected if key not in declared]
    if missing:
        found = ", ".join(output_schema.get("properties") or {}) or "none"
        raise TemplateProblem(
            f"the output schema of a {kind} template must declare the key(s) {', '.join(map(repr, missing))} "
            f"as required properties: the platform reads {' and '.join(map(repr, expected))} from the model's "
            f"output (the schema's properties: {found})"
        )


def empty_output(kind: str, parsed) -> str:
    """Why an output that parsed is still empty (every key the kind reads missing or blank), or ""."""
    expected = OUTPUT_KEYS.get(kind)
    if not expected or not isinstance(parsed, dict):
        return ""
    if any(_filled(parsed.get(key)) for key in expected):
        return ""
    keys = " and ".join(repr(key) for key in expected)
    return f"the output parsed but {keys} {'is' if len(expected) == 1 else 'are'} missing or empty"


def _filled(value) -> bool:
    if value is None:
        return False
    if isinstance(value, str):
        return bool(value.strip())
    if isinstance(value, (list, dict)):
        return bool(value)
    return True


def read_template_files(directory: Path = TEMPLATE_DIR) -> list[dict]:
    specs = []
    for path in sorted(directory.glob("*/*.yaml")):
        spec = yaml.safe_load(path.read_text(encoding="utf-8"))
        missing = {"kind", "name", "language", "user", "output_schema"} - set(spec)
        if missing:
            raise TemplateProblem(f"{path.name}: missing {', '.join(sorted(missing))}")
        try:
            template_check(
                kind=spec["kind"],
                system=spec.get("system", ""),
                user=spec["user"],
                output_schema=spec["output_schema"],
            )
        except TemplateProblem as exc:
            raise TemplateProblem(f"{path.relative_to(directory)}: {exc}") from exc
        specs.append(spec)
    return specs


def prompt_templates_load(*, directory: Path = TEMPLATE_DIR, using: str = "default") -> LoadReport:
    """Store each data file as a new version unless the latest version already says the same.

    ``migrate`` calls this once per database when it ends (``generation.apps``), and so does the
    ``load_prompt_templates`` command: the files are data, read by today's loader, never by a migration.
    """
    report = LoadReport()
    specs = read_template_files(directory)
    with transaction.atomic(using=using):
        for spec in specs:
            template, created = _add_version(PromptTemplate.objects.db_manager(using), spec)
            if created:
                report.created.append(template)
            else:
                report.unchanged += 1
    return report


def prompt_template_add_version(
    *, kind: str, name: str, language: str, system: str, user: str, output_schema: dict, notes: str = ""
) -> PromptTemplate:
    """A new version of (kind, name, language), or the latest one if it already says exactly this."""
    template_check(kind=kind, system=system, user=user, output_schema=output_schema)
    spec = {
        "kind": kind,
        "name": name,
        "language": language,
        "system": system,
        "user": user,
        "output_schema": output_schema,
        "notes": notes,
    }
    with transaction.atomic():
        return _add_version(PromptTemplate.objects, spec)[0]


def _add_version(manager, spec: dict):
    latest = (
        manager.select_for_update()
        .filter(kind=spec["kind"], name=spec["name"], language=spec["language"])
        .order_by("-version")
        .first()
    )
    content = {
        "system": (spec.get("system") or "").strip(),
        "user": spec["user"],
        "output_schema": spec["output_schema"],
    }
    if latest is not None and all(getattr(latest, key) == value for key, value in content.items()):
        return latest, False
    template = manager.create(
        kind=spec["kind"],
        name=spec["name"],
        language=spec["language"],
        version=(latest.version + 1) if latest else 1,
        notes=(spec.get("notes") or "").strip(),
        **content,
    )
    return template, True


def language_candidates(language: str) -> list[str]:
    """pt-BR → pt-BR, pt, then any pt-*, then English."""
    base = language.split("-")[0]
    return [language, base, f"{base}-", "en"]


def template_latest(*, kind: str, language: str, name: str | None = None) -> PromptTemplate | None:
    """The newest version of the kind's template in the language closest to ``language``."""
    name = name or DEFAULT_NAMES.get(kind, "default")
    rows = list(PromptTemplate.objects.filter(kind=kind, name=name).order_by("-version"))
    for candidate in language_candidates(language):
        for row in rows:
            if row.language == candidate or (candidate.endswith("-") and row.language.startswith(candidate)):
                return row
    return None


@lru_cache(maxsize=1)
def _class_definitions_file() -> dict:
    return yaml.safe_load((TEMPLATE_DIR / "classes.yaml").read_text(encoding="utf-8"))


def class_definitions(*, language: str, labels: list[str], overrides: dict | None = None) -> dict[str, str]:
    """label → one-line definition, from the project's overrides, else the shipped definitions."""
    shipped = _class_definitions_file()
    by_language = next((shipped[c] for c in language_candidates(language) if c in shipped), shipped["en"])
    overrides = overrides or {}
    return {label: overrides.get(label) or by_language.get(label) or label for label in labels}
