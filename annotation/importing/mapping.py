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
    "origin",
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
        "tipo_pearl",
        "pearl",
        "classe_de_pearl",
        "tipo_causal",
        "nivel_de_pearl",
        "degrau",
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
        "gabarito",
        "resposta_esperada",
        "expected_answer",
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
        "respondido",
        "respondida",
        "respondent",
        "author",
        "autor",
    ),
    "origin": (
        "origin",
        "question_origin",
        "origem_da_pergunta",
        "generated_by",
        "gerada_por",
        "gerado_por",
        "question_author",
        "autor_da_pergunta",
        "pergunta_gerada",
        "question_generated_by",
        "generated",
        "gerada",
        "synthetic",
        "sintetica",
    ),
    "source": ("source", "fonte", "origem", "dataset", "procedencia"),
    "topic": ("topic", "topico", "tema", "assunto", "theme", "subject"),
    "id": ("id", "external_id", "question_id", "id_pergunta", "qid", "uid", "numero"),
    "context": ("context", "contexto", "passage", "passagem"),
    "expertise": ("expertise", "especialidade", "area", "domain", "dominio"),
    "is_causal": ("is_causal", "causal", "causal_question", "e_causal", "pergunta_causal"),
}
# Fields whose values a file may spell its own way, and a --values entry may translate.
VALUE_FIELDS = ("causal_class", "answer_by", "origin", "is_causal")


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
        used = [
            column for name, column in self.columns.items() if not shares_source(name, column, self.columns)
        ]
        twice = sorted({column for column in used if used.count(column) > 1})
        if twice:
            problems.append(f"column(s) mapped to two fields: {', '.join(twice)}")
        return problems


def shares_source(name: str, column: str, columns: dict[str, str]) -> bool:
    """Where a question came from may be read from the source's column: a file that names the model which
    wrote a question as its source ("gpt5" beside "reddit") says both in one column."""
    return name == "origin" and columns.get("source") == column


def names_model(value) -> bool:
    """A value that names a language model ("gpt5", "Llama 3", "gemma-3-27b"), not a place such as "sharegpt"."""
    return any(word.startswith(MODEL_NAME_WORDS) for word in words(str(value)))


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


# Short forms people write in headers, read as the word they stand for.
ABBREVIATIONS = {
    "resp": "resposta",
    "ref": "referencia",
    "perg": "pergunta",
    "q": "question",
    "ans": "answer",
    "src": "source",
    "cls": "class",
    "identificador": "id",
    "codigo": "id",
}
# Words in a header that say it is about a model, an LLM or a person (a who-answered column).
MODEL_NAME_WORDS = (
    "llama",
    "gpt",
    "gemma",
    "mistral",
    "mixtral",
    "qwen",
    "claude",
    "gemini",
    "deepseek",
    "phi",
    "sabia",
    "falcon",
)
GENERIC_MODEL_WORDS = {"llm", "modelo", "model", "ia", "ai", "maquina", "machine", "chatgpt"}
PERSON_HEADER_WORDS = {"humano", "humana", "human", "pessoa", "person", "anotador", "annotator", "manual"}
GENERATION_WORDS = ("gerad", "generat", "sintet", "synthet")  # a header about where a question came from
_BOOLEAN_TRUE = {"1", "true", "yes", "y", "sim", "s", "verdadeiro", "t"}
_BOOLEAN_FALSE = {"0", "false", "no", "n", "nao", "falso", "f"}
TEXT_FIELDS = ("question", "answer", "context")  # free text: never a column of yes/no values
LONG_TEXT_CHARS = 15  # a column of free text: its values are this long on average, at least


def words(header: str) -> list[str]:
    """A header as its words: accents, punctuation and case gone, short forms spelled out."""
    plain = "".join(char if char.isalnum() else " " for char in fold(header).replace("_", " "))
    return [ABBREVIATIONS.get(word, word) for word in plain.split()]


def _known_words(name: str) -> dict[str, tuple[str, ...]]:
    return {known: tuple(known.split("_")) for known in KNOWN_NAMES[name]}


def _is_prose(header: str) -> bool:
    """A header written as words: spaces or punctuation, not an identifier joined by "_"."""
    stripped = str(header).strip()
    return any(char.isspace() or not (char.isalnum() or char in "_-") for char in stripped)


def _contains(haystack: list[str], needle: tuple[str, ...]) -> bool:
    size = len(needle)
    return any(tuple(haystack[index : index + size]) == needle for index in range(len(haystack) - size + 1))


def propose(
    columns: list[str],
    remembered: dict | None = None,
    sample: list[dict] | None = None,
    labels: list[str] | None = None,
) -> Mapping:
    """The mapping the platform suggests for a file with ``columns``: the project's remembered choice for
    each field whose column the file has; then the names (the whole header a known name, then a known name
    among its words: "Texto da Pergunta (usuário)" is the question); then, given ``sample`` rows, the values
    (a column of class labels is the class; a yes/no column whose name speaks of a model or a person is who
    answered, with the translation of its values proposed; unique whole numbers the id; long text the
    question, answer and context by length). Value translations remembered."""
    remembered_mapping = Mapping.from_dict(remembered)
    values = {field_name: dict(pairs) for field_name, pairs in remembered_mapping.values.items()}
    chosen: dict[str, str] = {}

    def free(column) -> bool:
        return column is not None and column not in chosen.values()

    for name in FIELDS:
        column = remembered_mapping.columns.get(name)
        if column in columns and (free(column) or (name == "source" and chosen.get("origin") == column)):
            chosen[name] = column
    header_words = {column: words(column) for column in columns}
    joined = {}
    for column in columns:
        joined.setdefault("_".join(header_words[column]), column)
        joined.setdefault(fold(column), column)
    for name in FIELDS:  # the whole header is a known name
        for known in KNOWN_NAMES[name]:
            if name not in chosen and free(joined.get(known)):
                chosen[name] = joined[known]
    # A known name among the words of a header written as words ("Texto da Pergunta (usuário)"); an identifier
    # (pergunta_errada, resposta_gemma) names something else on purpose, and is left to its values.
    prose = [column for column in columns if _is_prose(column)]
    for name in FIELDS:
        if name in chosen:
            continue
        for needle in _known_words(name).values():
            column = next(
                (c for c in prose if free(c) and _contains(header_words[c], needle)),
                None,
            )
            if column is not None:
                chosen[name] = column
                break
    if sample:
        for name in TEXT_FIELDS:  # "Resposta do GPT?" holding sim/não says who answered, not the answer
            column = chosen.get(name)
            remembered_here = column in remembered_mapping.columns.values()
            if column is not None and not remembered_here and _is_boolean(_cells(sample, column)):
                del chosen[name]
        _propose_from_values(columns, chosen, values, sample, labels or [], header_words)
    ordered = {name: chosen[name] for name in FIELDS if name in chosen}
    return Mapping(columns=ordered, values=values)


def _cells(sample: list[dict], column: str) -> list[str]:
    cells = []
    for record in sample:
        value = record.get(column)
        if value is None or (isinstance(value, str) and not value.strip()):
            continue
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        cells.append(str(value).strip())
    return cells


def _is_boolean(cells: list[str]) -> bool:
    folded = {fold(cell) for cell in cells}
    return bool(folded) and folded <= (_BOOLEAN_TRUE | _BOOLEAN_FALSE) and len(folded) <= 4


def _who_answered(header: list[str]) -> tuple[bool, str] | None:
    """(True means a person?, the model's name) for a yes/no header that speaks of who answered."""
    if any(word.startswith(GENERATION_WORDS) for word in header):
        return None  # where the question came from
    return _who(header)


def _who(header: list[str]) -> tuple[bool, str] | None:
    if any(word in PERSON_HEADER_WORDS for word in header):
        return True, "model"
    named = next((word for word in header if word.startswith(MODEL_NAME_WORDS)), None)
    if named:
        return False, named
    if any(word in GENERIC_MODEL_WORDS for word in header):
        return False, "model"
    return None


def _propose_from_values(columns, chosen, values, sample, labels, header_words) -> None:
    from .read import LabelResolver  # read imports this module

    def free(column) -> bool:
        return column not in chosen.values()

    cells = {column: _cells(sample, column) for column in columns}
    resolver = LabelResolver(labels, values.get("causal_class"))
    if "causal_class" not in chosen and labels:
        for column in columns:
            found = cells[column]
            if free(column) and found and sum(1 for c in found if resolver.resolve(c)) >= 0.8 * len(found):
                chosen["causal_class"] = column
                break
    if "answer_by" not in chosen:
        for column in columns:
            if not free(column) or not _is_boolean(cells[column]):
                continue
            if _who_answered(header_words[column]) is not None:
                chosen["answer_by"] = column
                break
    column = chosen.get("answer_by")
    if column and "answer_by" not in values and _is_boolean(cells[column]):
        meaning = _who_answered(header_words[column])
        if meaning is not None:  # else the page asks which value means a person
            true_is_person, model = meaning
            values["answer_by"] = {
                spelling: ("person" if (spelling in _BOOLEAN_TRUE) == true_is_person else model)
                for spelling in sorted({fold(cell) for cell in cells[column]})
            }
    if "origin" not in chosen:  # a yes/no column saying a question was generated (by a model it may name)
        for column in columns:
            header = header_words[column]
            if (
                free(column)
                and _is_boolean(cells[column])
                and any(w.startswith(GENERATION_WORDS) for w in header)
            ):
                chosen["origin"] = column
                break
    source = chosen.get("source")
    if "origin" not in chosen and source and any(names_model(cell) for cell in cells[source]):
        chosen["origin"] = source  # "gpt5" beside "reddit": the questions a model wrote (read.OriginResolver)
    column = chosen.get("origin")
    if column and "origin" not in values and _is_boolean(cells[column]):
        true_is_person, model = _who(header_words[column]) or (False, "generated")
        values["origin"] = {
            spelling: (
                "natural"
                if (spelling in _BOOLEAN_TRUE) == true_is_person
                else ("generated" if model == "model" else model)
            )
            for spelling in sorted({fold(cell) for cell in cells[column]})
        }
    if "id" not in chosen:
        for column in columns:
            found = cells[column]
            if (
                free(column)
                and len(found) == len(sample)
                and all(cell.lstrip("-").isdigit() for cell in found)
                and len(set(found)) == len(found)
                and not _is_boolean(found)
            ):
                chosen["id"] = column
                break
    texts = []
    for column in columns:
        found = cells[column]
        if not free(column) or not found or _is_boolean(found):
            continue
        if (
            sum(1 for cell in found if cell.replace(".", "").replace(",", "").lstrip("-").isdigit())
            > len(found) / 2
        ):
            continue
        length = sum(map(len, found)) / len(found)
        if length >= LONG_TEXT_CHARS and len(set(found)) > len(found) / 2:
            questions = sum(1 for cell in found if cell.rstrip().endswith("?")) / len(found)
            texts.append((column, length, questions))
    if "question" not in chosen and texts:
        column = max(texts, key=lambda entry: (entry[2], -entry[1]))[0]
        chosen["question"] = column
        texts = [entry for entry in texts if entry[0] != column]
    question_length = (
        sum(map(len, cells[chosen["question"]])) / max(len(cells[chosen["question"]]), 1)
        if "question" in chosen
        else 0
    )
    longer = sorted((entry for entry in texts if entry[1] > question_length), key=lambda entry: entry[1])
    if "answer" not in chosen and longer:
        chosen["answer"] = longer.pop(0)[0]
    if "context" not in chosen and longer:
        chosen["context"] = longer[-1][0]


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
