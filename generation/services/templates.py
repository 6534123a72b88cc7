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

from ..kinds import call_kind, call_kinds
from ..llm.prompts import placeholders
from ..models import PromptTemplate
from ..prompts import FOLDER, template_dirs

# generation's own folder (its kinds' templates and the class definitions); ``template_dirs`` finds every app's
TEMPLATE_DIR = Path(__file__).resolve().parent.parent / FOLDER
CONTENT_FIELDS = ("system", "user", "output_schema")


class TemplateProblem(ValueError):
    pass


@dataclass
class LoadReport:
    created: list[PromptTemplate] = field(default_factory=list)
    unchanged: int = 0


def template_check(*, kind: str, system: str, user: str, output_schema: dict) -> None:
    """Raise TemplateProblem naming an unknown kind or placeholder, or an invalid schema.

    What a kind's templates may use and must declare is its entry in the call-kind registry (``generation.kinds``).
    """
    registered = call_kind(kind)
    if registered is None:
        known = ", ".join(sorted(entry.key for entry in call_kinds()))
        raise TemplateProblem(f"unknown kind {kind!r}; known: {known}")
    allowed = set(registered.variables)
    if allowed:
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
    expected = registered.output_keys
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
    registered = call_kind(kind)
    expected = registered.output_keys if registered is not None else ()
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


def read_template_files(directory: Path | None = None) -> list[dict]:
    """The template files in ``directory``, or in every installed app's ``prompt_templates/`` folder."""
    specs = []
    for folder in [directory] if directory is not None else template_dirs():
        specs += _read_folder(folder)
    return specs


def _read_folder(directory: Path) -> list[dict]:
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


def prompt_templates_load(*, directory: Path | None = None, using: str = "default") -> LoadReport:
    """Store each data file as a new version unless the latest version already says the same.

    The files are every installed app's (``generation.prompts.template_dirs``), or ``directory``'s alone.
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
    registered = call_kind(kind)
    name = name or (registered.default_template if registered is not None else "default")
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
