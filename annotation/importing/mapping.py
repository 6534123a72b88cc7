"""The mapping step of every import: which column of the file is which field, and what its values mean.

A mapping is proposed from the names researchers use (English and Portuguese, any case, accents
ignored) and from the mapping a project used last time; a curator (the page) or the command line
(``--columns``, ``--values``) corrects it. Pure Python: the page, the command and the service share it.
"""

import unicodedata
from dataclasses import dataclass, field

# The fields an imported row can fill, in the order the page shows them.
FIELDS = (
    "question",
    "causal_class",
    "answer",
    "answer_by",
    "source",
    "topic",
    "id",
    "context",
    "expertise",
    "is_causal",
)

# Names people give each field's column, already folded (see ``fold``); the first found wins.
KNOWN_NAMES = {
    "question": ("question", "pergunta", "questao", "query", "consulta", "text", "texto"),
    "causal_class": (
        "causal_class",
        "classe_causal",
        "class",
        "classe",
        "pearl_class",
        "classe_pearl",
        "label",
        "rotulo",
        "causal_level",
        "nivel_causal",
    ),
    "answer": (
        "answer",
        "resposta",
        "reference_answer",
        "resposta_referencia",
        "resposta_de_referencia",
        "reference",
        "referencia",
        "groundtruth",
        "ground_truth",
        "gold_answer",
        "gold",
        "resposta_ouro",
    ),
    "answer_by": (
        "answer_by",
        "answered_by",
        "respondido_por",
        "respondida_por",
        "answer_author",
        "autor_resposta",
        "autor_da_resposta",
        "answerer",
        "quem_respondeu",
        "author",
        "autor",
    ),
    "source": ("source", "fonte", "origem", "dataset"),
    "topic": ("topic", "topico", "tema", "assunto"),
    "id": ("id", "external_id", "question_id", "id_pergunta", "qid", "uid"),
    "context": ("context", "contexto", "passage", "passagem"),
    "expertise": ("expertise", "especialidade", "area", "domain", "dominio"),
    "is_causal": ("is_causal", "causal", "causal_question", "e_causal", "pergunta_causal"),
}
# Fields whose values a file may spell its own way, and a --values entry may translate.
VALUE_FIELDS = ("causal_class", "answer_by", "is_causal")


def fold(text: str) -> str:
    """Case-folded, accents removed, spaces and hyphens as "_": "Classe Causal" and "classe-causal" meet."""
    decomposed = unicodedata.normalize("NFKD", str(text).strip().casefold())
    plain = "".join(char for char in decomposed if not unicodedata.combining(char))
    return "_".join(plain.replace("-", " ").replace(".", " ").split())


class MappingError(ValueError):
    """A ``--columns`` or ``--values`` entry, or a mapping posted by the page, that cannot be used."""


@dataclass
class Mapping:
    """``columns``: field → the file's column; ``values``: field → {the file's value (folded) → value};
    ``keep``: the unmapped columns kept as item metadata (None: every one)."""

    columns: dict[str, str] = field(default_factory=dict)
    values: dict[str, dict[str, str]] = field(default_factory=dict)
    keep: list[str] | None = None

    def as_dict(self) -> dict:
        return {
            "columns": dict(self.columns),
            "values": {k: dict(v) for k, v in self.values.items()},
            "keep": self.keep,
        }

    @classmethod
    def from_dict(cls, data: dict | None) -> "Mapping":
        data = data or {}
        return cls(
            columns=dict(data.get("columns") or {}),
            values=dict(data.get("values") or {}),
            keep=data.get("keep"),
        )

    def metadata_columns(self, columns: list[str]) -> list[str]:
        mapped = set(self.columns.values())
        kept = [column for column in columns if column not in mapped and column]
        return kept if self.keep is None else [column for column in kept if column in self.keep]

    def check(self, columns: list[str]) -> list[str]:
        """What is wrong with this mapping for a file with ``columns`` (empty: nothing)."""
        problems = []
        unknown = [name for name in self.columns if name not in FIELDS]
        if unknown:
            problems.append(f"unknown field(s) {', '.join(unknown)}; the fields are: {', '.join(FIELDS)}")
        for name, column in self.columns.items():
            if column not in columns:
                problems.append(
                    f"{name}={column}: the file has no column {column!r} "
                    f"(its columns: {', '.join(columns) or 'none'})"
                )
        used = [column for column in self.columns.values()]
        twice = sorted({column for column in used if used.count(column) > 1})
        if twice:
            problems.append(f"column(s) mapped to two fields: {', '.join(twice)}")
        return problems


QUESTIONS, RESULTS = "questions", "results"  # the kinds of import, each with its own remembered mapping


def remembered(project, kind: str = QUESTIONS) -> dict:
    """The mapping ``project`` used last for this kind of import (succeeded or failed)."""
    saved = (project.import_mappings or {}).get(kind)
    if saved is None and kind == QUESTIONS:
        return project.import_mapping or {}
    return saved or {}


def remember(project, kind: str, mapping: dict) -> None:
    """Keep ``mapping`` as the project's last of this kind, proposed for its next import."""
    project.import_mappings = {**(project.import_mappings or {}), kind: mapping}
    fields = ["import_mappings"]
    if kind == QUESTIONS:
        project.import_mapping = mapping
        fields.append("import_mapping")
    project.save(update_fields=fields)


def propose(columns: list[str], remembered: dict | None = None) -> Mapping:
    """The mapping the platform suggests for a file with ``columns``: the project's remembered choice for
    each field whose column the file has, else the first known name found; value translations remembered."""
    remembered_mapping = Mapping.from_dict(remembered)
    by_folded = {}
    for column in columns:
        by_folded.setdefault(fold(column), column)
    chosen: dict[str, str] = {}
    for name in FIELDS:
        column = remembered_mapping.columns.get(name)
        if column in columns and column not in chosen.values():
            chosen[name] = column
    for name in FIELDS:
        if name in chosen:
            continue
        for known in KNOWN_NAMES[name]:
            column = by_folded.get(known)
            if column is not None and column not in chosen.values():
                chosen[name] = column
                break
    ordered = {name: chosen[name] for name in FIELDS if name in chosen}
    return Mapping(columns=ordered, values=remembered_mapping.values)


def parse_columns(text: str, fields: tuple[str, ...] = FIELDS) -> dict[str, str]:
    """``question=pergunta,causal_class=Classe`` → {field: column}, each field one of ``fields`` (the import's
    own: a question import's by default). Raises MappingError naming the entry."""
    columns = {}
    for entry in _entries(text):
        name, sep, column = entry.partition("=")
        name, column = name.strip(), column.strip()
        if not sep or not name or not column:
            raise MappingError(f"write FIELD=COLUMN, e.g. {fields[0]}=COLUMN, not {entry!r}")
        if name not in fields:
            raise MappingError(f"unknown field {name!r} in {entry!r}; the fields are: {', '.join(fields)}")
        columns[name] = column
    return columns


def parse_values(text: str) -> dict[str, dict[str, str]]:
    """``causal_class:Assoc=associational,Inter=interventional`` → {field: {folded value: value}}; a field
    named once applies to the entries after it. Raises MappingError naming the entry."""
    values: dict[str, dict[str, str]] = {}
    current = ""
    for entry in _entries(text):
        head, sep, target = entry.rpartition("=")
        if not sep or not head.strip():
            raise MappingError(
                f"write FIELD:VALUE=MEANING, e.g. causal_class:Assoc=associational, not {entry!r}"
            )
        if ":" in head:
            current, _colon, head = head.partition(":")
            current = current.strip()
            if current not in VALUE_FIELDS:
                raise MappingError(f"values can be given for {', '.join(VALUE_FIELDS)}, not {current!r}")
        if not current:
            raise MappingError(f"name the field first, e.g. causal_class:{entry.strip()}")
        values.setdefault(current, {})[fold(head)] = target.strip()
    return values


def check_values(values: dict[str, dict[str, str]], labels: list[str]) -> list[str]:
    """Class translations must name one of the project's labels."""
    problems = []
    for raw, target in values.get("causal_class", {}).items():
        if target not in labels:
            problems.append(
                f"causal_class:{raw}={target}: {target!r} is not a label of the project "
                f"(its labels: {', '.join(labels)})"
            )
    return problems


def _entries(text: str) -> list[str]:
    return [entry for entry in (part.strip() for part in (text or "").replace("\n", ",").split(",")) if entry]
