"""The documents of a release's harness tasks: one line per released item, with every prompt already written.

Each document carries the item's id, class and the report's breakdown values, and, for each prompting condition
the harnesses ask under, the system and user text rendered from the platform's own benchmark-answer template
(the latest version in the project's language, as a new benchmark run would use), so a harness sends the words a
benchmark run of the platform sends. Closed formats add the letters, the right ones and the log-likelihood form
of the question; open answers add the reference answer.
"""

import re
from dataclasses import dataclass, field

import orjson

from annotation.designs import design_for
from generation.llm.prompts import render
from generation.models import PromptTemplate
from generation.services import template_latest
from generation.services.templates import class_definitions

from ...models import default_metadata_keys
from ...runs.choices import yes_no_gold
from ...runs.conditions import CONDITIONS, MULTIPLE_CHOICE, OPEN, YES_NO, question_of, record_metadata
from ...runs.kinds import Kind
from ...runs.work import answer_variables
from ...selectors.releases import release_split_texts
from ..splits import SPLITS

# Few-shot prompts take solved examples from the train split, chosen per run: the harnesses' own few-shot
# options do that for them, so the tasks ask the zero-shot, chain-of-thought and open conditions.
SKIPPED_CONDITIONS = {"few-shot"}
# The report's breakdowns beside the class (``EvalRun.metadata_keys``' defaults): level, question type, task, variant.
BREAKDOWNS = ("level", "type", "task", "variant")
# The log-likelihood form of a closed question: the template's labels, the answer cue last.
WORDS = {
    "pt": {"context": "Contexto", "question": "Pergunta", "options": "Opções", "answer": "Resposta"},
    "en": {"context": "Context", "question": "Question", "options": "Options", "answer": "Answer"},
}
YES_NO_WORDS = {"pt": ("sim", "não"), "en": ("yes", "no")}


class HarnessUnavailable(ValueError):
    """The release cannot be asked by a harness (its answer format, or a missing prompt template)."""


@dataclass
class Variant:
    """One way a harness asks the release: a prompting condition answered in text, or the log-likelihood of the
    choices (``condition`` "log-likelihood")."""

    key: str  # in task names and document fields: zero_shot, class_agnostic, choice
    condition: str  # the platform's condition name, which imported results come back under
    output: str  # generate_until or multiple_choice
    template: PromptTemplate | None = None


@dataclass
class HarnessDocs:
    answer_format: str
    language: str
    variants: list[Variant]
    splits: dict[str, bytes] = field(default_factory=dict)  # each split's documents as JSON lines
    # beside the class, the breakdowns the test split has values of
    breakdowns: list[str] = field(default_factory=list)
    bertscore: dict = field(default_factory=dict)
    # the test split's values of the class and of each breakdown (the tasks and groups are made of them)
    test_values: dict[str, set] = field(default_factory=dict)

    def lines(self, split: str) -> bytes:
        return self.splits[split]


def field_key(name: str) -> str:
    """A name as it may appear in a task name or a document field: lower-case letters, digits and _."""
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_") or "x"


def harness_variants(project) -> list[Variant]:
    """The conditions of the project's answer format whose template exists, and the log-likelihood form of
    closed formats. Raises ``HarnessUnavailable`` for a format benchmark runs do not evaluate."""
    answer_format = project.answer_format
    if answer_format not in CONDITIONS:
        raise HarnessUnavailable(
            f"a harness asks open, multiple-choice or yes/no questions; this project's answers are {answer_format}"
        )
    variants = []
    if answer_format in (MULTIPLE_CHOICE, YES_NO):
        variants.append(Variant("choice", "log-likelihood", "multiple_choice"))
    for condition, name in CONDITIONS[answer_format].items():
        if condition in SKIPPED_CONDITIONS:
            continue
        template = template_latest(kind=Kind.BENCHMARK_ANSWER, language=project.language, name=name)
        if template is not None:
            variants.append(Variant(field_key(condition), condition, "generate_until", template))
    if not any(variant.template for variant in variants):
        raise HarnessUnavailable(
            "no benchmark_answer prompt template in this language; run `python manage.py load_prompt_templates`"
        )
    return variants


def harness_docs(release) -> HarnessDocs:
    project = release.project
    variants = harness_variants(project)
    language = (project.language or "en").split("-")[0].lower()
    definitions = class_definitions(
        language=project.language,
        labels=list(project.label_set),
        overrides=(project.design_settings or {}).get("class_definitions"),
    )
    design = design_for(project)
    keys = default_metadata_keys()
    docs = HarnessDocs(project.answer_format, language, variants, bertscore=_bertscore(project))
    values: dict[str, set] = {name: set() for name in ("causal_class", *BREAKDOWNS)}
    level_is_class = True
    for split in SPLITS:
        lines = []  # kept as JSON lines, not dicts: a fraction of the memory for a large release
        for text in release_split_texts(release, split):
            doc = _doc(orjson.loads(text), project, design, definitions, variants, keys, language)
            if split == "test":
                for name, seen in values.items():
                    seen.add(doc[name])
                level_is_class = level_is_class and doc["level"] == doc["causal_class"]
            lines.append(orjson.dumps(doc, option=orjson.OPT_SORT_KEYS | orjson.OPT_APPEND_NEWLINE))
        docs.splits[split] = b"".join(lines)
    docs.test_values = {name: seen - {""} for name, seen in values.items()}
    docs.breakdowns = [
        name for name in BREAKDOWNS if docs.test_values[name] and not (name == "level" and level_is_class)
    ]
    return docs


def _bertscore(project) -> dict:
    return {"model": project.bertscore_model or "", "layer": None, "idf": False}


def _doc(record, project, design, definitions, variants, keys, language) -> dict:
    meta = record_metadata(record)
    doc = {
        "id": record["id"],
        "question": record["question"],
        "causal_class": record.get("causal_class", ""),
        "group": record.get("group", ""),
        "level": str(meta.get(keys["level"], "") or record.get("causal_class", "")),
        "type": str(meta.get(keys["type"], "") or ""),
        "task": str(meta.get(keys["task"], "") or ""),
        "variant": str(meta.get(keys["variant"], "") or ""),
    }
    variables = answer_variables(record, project, definitions)
    for variant in variants:
        if variant.template is None:
            continue
        doc[f"system_{variant.key}"] = render(variant.template.system, variables).strip()
        doc[f"prompt_{variant.key}"] = render(variant.template.user, variables).strip()
    words = WORDS.get(language, WORDS["en"])
    context = f"{words['context']}: {record['context']}\n\n" if record.get("context") else ""
    if project.answer_format == MULTIPLE_CHOICE:
        asked = question_of(record, design, project.language)
        letters = [option["letter"] for option in asked["options"]]
        right = sorted(asked["correct"])
        doc.update(
            letters=letters,
            options=[option["text"] for option in asked["options"]],
            gold_letters=right,
            gold=letters.index(right[0]) if right and right[0] in letters else -1,
            choice_prompt=f"{context}{words['question']}: {asked['question']}\n\n{words['options']}:\n"
            f"{variables['options']}\n\n{words['answer']}:",
        )
    elif project.answer_format == YES_NO:
        gold = yes_no_gold(record) or ""
        doc.update(
            gold_answer=gold,
            choices=list(YES_NO_WORDS.get(language, YES_NO_WORDS["en"])),
            gold={"yes": 0, "no": 1}.get(gold, -1),
            choice_prompt=f"{context}{words['question']}: {record['question']}\n\n{words['answer']}:",
        )
    elif project.answer_format == OPEN:
        doc["reference"] = record.get("answer", "")
    return doc
