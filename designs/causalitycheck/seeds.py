"""CausalityCheck seeds and the checklist derived from them (paper section 2.3 and appendix J).

A *seed* is a four-option multiple-choice item (an ``ItemGroup`` of kind ``seed``: its context,
and in its metadata the question, options and answer). Its *ingredients* are the texts the
checklist needs besides the seed: a real entity and an invented name for it, a correct and a
corrupted causal chain, a distractor sentence, a paraphrase of the context, a version of the
context without a key cause (and its paraphrase), and one conclusion per verdict. The example
dataset ships them; a model writes them otherwise (``generation.services.checklist``).

From a seed with all its ingredients, ``seed_derive`` writes the 36 items of the paper's 4 × 4
checklist — tasks original problem (1 item), answerable judging (2), process judging (2) and
causal validity assessing (4), each in the variants problem solving (the seed's own text),
problem understanding (paraphrased context), irrelevant disturbance (one distractor sentence
inserted) and virtual causal reasoning (the entity replaced everywhere by the invented name).
The same ingredients always give the same items.
"""

import math
import re
import unicodedata
from dataclasses import dataclass, field

from django.db import transaction
from django.utils import translation
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from annotation.models import Item, ItemGroup, Option, Project
from annotation.services import NOBODY, Author, NewItem, items_create

SEED_KIND = "seed"
DESIGN = "causalitycheck"

# Tasks (columns of the paper's Table 3) and variants (its rows), in the paper's order.
TASKS = {
    "op": ("OP", gettext_lazy("Original problem")),
    "aj": ("AJ", gettext_lazy("Answerable judging")),
    "pj": ("PJ", gettext_lazy("Process judging")),
    "cva": ("CVA", gettext_lazy("Causal validity assessing")),
}
VARIANTS = {
    "ps": ("PS", gettext_lazy("Problem solving")),
    "pu": ("PU", gettext_lazy("Problem understanding")),
    "id": ("ID", gettext_lazy("Irrelevant disturbance")),
    "vcr": ("VCR", gettext_lazy("Virtual causal reasoning")),
}
VERDICTS = {
    "correct_and_reliable": gettext_lazy("Correct and reliable"),
    "correct_but_prone_to_error": gettext_lazy("Correct but prone to error"),
    "incorrect_but_prone_to_correctness": gettext_lazy("Incorrect but prone to correctness"),
    "incorrect_and_unreliable": gettext_lazy("Incorrect and unreliable"),
}
LETTERS = ["A", "B", "C", "D"]
# The items of one task in one variant (a sibling group): their roles, and the gold label of each.
TASK_ROLES = {
    "op": {"original": None},  # the label is the letter of the correct option
    "aj": {"answerable": "answerable", "unanswerable": "unanswerable"},
    "pj": {"correct": "valid_chain", "corrupted": "invalid_chain"},
    "cva": {verdict: verdict for verdict in VERDICTS},
}
LABELS = LETTERS + ["answerable", "unanswerable", "valid_chain", "invalid_chain", *VERDICTS]
LABEL_NAMES = {
    "answerable": gettext_lazy("Answerable"),
    "unanswerable": gettext_lazy("Unanswerable"),
    "valid_chain": gettext_lazy("Valid chain"),
    "invalid_chain": gettext_lazy("Invalid chain"),
}

INGREDIENTS = (
    "entity",
    "invented_entity",
    "causal_chain",
    "corrupted_chain",
    "distractor_sentence",
    "paraphrased_context",
    "unanswerable_context",
    "paraphrased_unanswerable_context",
    "verdicts",
)
CHAIN_ARROW = re.compile(r"\s*(?:→|->)\s*")
_SENTENCE_END = re.compile(r"(?<=[.!?…])\s+")


class SeedInvalid(ValueError):
    """A seed cannot be stored or derived; the message names the seed and the field."""


def cell_code(task: str, variant: str) -> str:
    """``PU-AJ``: the variant's code, then the task's, as the paper names its 16 cells."""
    return f"{VARIANTS[variant][0]}-{TASKS[task][0]}"


def cells() -> list[tuple[str, str]]:
    return [(task, variant) for variant in VARIANTS for task in TASKS]


# --- text transforms (pure) ------------------------------------------------------------------


def sentences(text: str) -> list[str]:
    return [part for part in _SENTENCE_END.split((text or "").strip()) if part]


def insert_sentence(context: str, sentence: str) -> str:
    """The context with ``sentence`` inserted after the first half of its sentences (ID variant)."""
    parts = sentences(context)
    at = math.ceil(len(parts) / 2)
    return " ".join(parts[:at] + [sentence.strip()] + parts[at:])


def _entity_pattern(entity: str) -> re.Pattern:
    return re.compile(r"(?<!\w)" + re.escape(entity.strip()) + r"(?!\w)", re.IGNORECASE)


def replace_entity(text: str, entity: str, invented: str) -> str:
    """Every mention of ``entity`` (any case, whole words) replaced by ``invented`` (VCR variant)."""
    return _entity_pattern(entity).sub(invented.strip(), text or "")


def without_accents(text: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFKD", text or "") if not unicodedata.combining(c))


def mentions(text: str, entity: str) -> bool:
    """Whether ``text`` names ``entity``, ignoring case and accents."""
    return bool(entity.strip()) and bool(
        _entity_pattern(without_accents(entity)).search(without_accents(text))
    )


def chain_links(chain: str) -> list[str]:
    return [link.strip() for link in CHAIN_ARROW.split(chain or "") if link.strip()]


# --- seeds -----------------------------------------------------------------------------------


@dataclass
class SeedData:
    """A seed as read from a file or an ItemGroup: the item, and whatever ingredients are known."""

    external_id: str
    context: str
    question: str
    options: list[str]
    answer_index: int
    ingredients: dict = field(default_factory=dict)

    @classmethod
    def from_dict(cls, spec: dict, where: str = "") -> "SeedData":
        where = where or f"seed {spec.get('external_id') or '?'}"
        for name in ("external_id", "context", "question"):
            if not isinstance(spec.get(name), str) or not spec[name].strip():
                raise SeedInvalid(f"{where}: {name} is missing or empty")
        options = spec.get("options")
        if (
            not isinstance(options, list)
            or len(options) != 4
            or not all(isinstance(text, str) and text.strip() for text in options)
        ):
            raise SeedInvalid(f"{where}: options must be a list of four non-empty texts")
        answer = spec.get("answer_index")
        if not isinstance(answer, int) or isinstance(answer, bool) or not 0 <= answer <= 3:
            raise SeedInvalid(f"{where}: answer_index must be 0, 1, 2 or 3 (the correct option's place)")
        ingredients = {name: spec[name] for name in INGREDIENTS if spec.get(name) not in (None, "", [])}
        return cls(
            spec["external_id"].strip(),
            spec["context"].strip(),
            spec["question"].strip(),
            [text.strip() for text in options],
            answer,
            ingredients,
        )

    @classmethod
    def from_group(cls, group: ItemGroup) -> "SeedData":
        meta = group.metadata or {}
        return cls(
            group.external_id,
            group.context,
            meta["question"],
            list(meta["options"]),
            meta["answer_index"],
            dict(meta.get("ingredients") or {}),
        )

    def missing(self) -> list[str]:
        return [name for name in INGREDIENTS if self.ingredients.get(name) in (None, "", [])]

    def lacking_verdicts(self) -> list[str]:
        """The verdicts with no explanation yet (one prompt per verdict adds them one by one)."""
        have = {
            entry.get("verdict")
            for entry in self.ingredients.get("verdicts") or []
            if isinstance(entry, dict)
        }
        return [verdict for verdict in VERDICTS if verdict not in have]

    def complete(self) -> bool:
        """Every ingredient there, with an explanation for each verdict: the checklist can be derived."""
        return not self.missing() and not self.lacking_verdicts()

    def check_ingredients(self) -> None:
        """Raise SeedInvalid naming the first ingredient that is missing or cannot work."""
        where = f"seed {self.external_id}"
        missing = self.missing()
        if missing:
            raise SeedInvalid(f"{where}: missing {', '.join(missing)}")
        found = {entry.get("verdict") for entry in self.ingredients["verdicts"] if isinstance(entry, dict)}
        if found != set(VERDICTS) or len(self.ingredients["verdicts"]) != len(VERDICTS):
            raise SeedInvalid(
                f"{where}: verdicts must hold one explanation for each of {', '.join(VERDICTS)}"
            )
        for name in ("causal_chain", "corrupted_chain"):
            if len(chain_links(self.ingredients[name])) < 2:
                raise SeedInvalid(f"{where}: {name} must read like 'A → B → C'")
        entity = self.ingredients["entity"]
        if not any(mentions(text, entity) for text in [self.context, self.question, *self.options]):
            raise SeedInvalid(
                f"{where}: the entity {entity!r} does not appear in the seed, so it cannot be replaced"
            )
        if mentions(self.ingredients["invented_entity"], entity):
            raise SeedInvalid(f"{where}: the invented name still contains the entity {entity!r}")


@transaction.atomic
def seed_create(*, project: Project, spec: dict, where: str = "") -> ItemGroup:
    """Store one seed (a dict like the example file's seeds); ingredients given are kept."""
    seed = SeedData.from_dict(spec, where)
    if ItemGroup.objects.filter(project=project, external_id=seed.external_id).exists():
        raise SeedInvalid(
            f"{where or 'seed ' + seed.external_id}: the project already has a seed with this id"
        )
    return ItemGroup.objects.create(
        project=project,
        kind=SEED_KIND,
        external_id=seed.external_id,
        context=seed.context,
        metadata={
            "question": seed.question,
            "options": seed.options,
            "answer_index": seed.answer_index,
            "ingredients": seed.ingredients,
            "ingredient_provenance": {},
        },
    )


def seeds_of(project: Project):
    return ItemGroup.objects.filter(project=project, kind=SEED_KIND).order_by("pk")


# --- the checklist ---------------------------------------------------------------------------


def checklist_specs(seed: SeedData, *, unanswerable_answer: str = "") -> list[dict]:
    """The 36 items of a complete seed, as dicts (the same ingredients always give the same list).

    Each problem-solving item is built from the seed; each variant is built from the
    problem-solving item of the same task and role (its ``source``).
    """
    ing = seed.ingredients
    answer_text = seed.options[seed.answer_index]
    contexts = {
        "answerable": (seed.context, ing["paraphrased_context"]),
        "unanswerable": (ing["unanswerable_context"], ing["paraphrased_unanswerable_context"]),
    }
    conclusions = {entry["verdict"]: entry["explanation"] for entry in ing["verdicts"]}
    base: list[dict] = []
    for task, roles in TASK_ROLES.items():
        for role, label in roles.items():
            source_key = "unanswerable" if role == "unanswerable" else "answerable"
            if task == "pj":
                answer = ing["causal_chain"] if role == "correct" else ing["corrupted_chain"]
            elif task == "cva":
                answer = conclusions[role]
            elif role == "unanswerable":
                answer = unanswerable_answer
            else:
                answer = answer_text
            base.append(
                {
                    "task": task,
                    "role": role,
                    "label": label or LETTERS[seed.answer_index],
                    "question": seed.question,
                    "context": contexts[source_key][0],
                    "paraphrase": contexts[source_key][1],
                    "options": list(seed.options),
                    "answer_index": seed.answer_index,
                    "reference_answer": answer,
                }
            )
    specs = []
    for variant in VARIANTS:
        for item in base:
            spec = {key: value for key, value in item.items() if key != "paraphrase"}
            spec.update(
                variant=variant,
                cell=cell_code(item["task"], variant),
                seed=seed.external_id,
                sibling_key=f"{seed.external_id}/{cell_code(item['task'], variant)}",
            )
            spec["external_id"] = f"{spec['sibling_key']}/{item['role']}"
            spec["source"] = (
                ""
                if variant == "ps"
                else f"{seed.external_id}/{cell_code(item['task'], 'ps')}/{item['role']}"
            )
            if variant == "pu":
                spec["context"] = item["paraphrase"]
            elif variant == "id":
                spec["context"] = insert_sentence(item["context"], ing["distractor_sentence"])
                spec["inserted"] = ing["distractor_sentence"].strip()
            elif variant == "vcr":
                entity, invented = ing["entity"], ing["invented_entity"]
                for name in ("question", "context", "reference_answer"):
                    spec[name] = replace_entity(spec[name], entity, invented)
                spec["options"] = [replace_entity(text, entity, invented) for text in spec["options"]]
                spec["entity"], spec["invented_entity"] = entity.strip(), invented.strip()
            specs.append(spec)
    return specs


def item_metadata(spec: dict, group: ItemGroup) -> dict:
    """What links a derived item to its seed, its cell and its siblings (and what the checks need)."""
    metadata = {
        "design": DESIGN,
        "task": spec["task"],
        "variant": spec["variant"],
        "cell": spec["cell"],
        "role": spec["role"],
        "seed": spec["seed"],
        "seed_group": group.pk,
        "sibling_key": spec["sibling_key"],
        "source": spec["source"],
    }
    for name in ("inserted", "entity", "invented_entity"):
        if name in spec:
            metadata[name] = spec[name]
    return metadata


def unanswerable_answer_text(language: str) -> str:
    with translation.override(language):
        return _("Cannot be answered: the context lacks a cause the answer needs.")


@transaction.atomic
def seed_derive(*, group: ItemGroup, provenance: dict | None = None) -> list[Item]:
    """Write the seed's 36 checklist items, in review (round 1); nothing if they exist already.

    Raises ``SeedInvalid`` when an ingredient is missing or cannot work. ``provenance`` (by
    ingredient) says which model call wrote what; items carry the one behind their answer.
    """
    group = ItemGroup.objects.select_for_update().get(pk=group.pk)
    if Item.objects.filter(group=group).exists():
        return []
    seed = SeedData.from_group(group)
    seed.check_ingredients()
    provenance = provenance if provenance is not None else (group.metadata.get("ingredient_provenance") or {})
    specs = checklist_specs(seed, unanswerable_answer=unanswerable_answer_text(group.project.language))
    items = []
    for position, spec in enumerate(specs):
        answer_from = {"pj": "causal_chain", "cva": "verdicts"}.get(spec["task"], "")
        made_by = provenance.get(answer_from) or provenance.get(_variant_ingredient(spec)) or {}
        items.append(
            NewItem(
                group_id=group.pk,
                position_in_group=position,
                question=spec["question"],
                context=spec["context"],
                causal_class=spec["label"],
                origin=Item.Origin.GENERATED
                if spec["variant"] != "ps" or spec["task"] != "op"
                else Item.Origin.NATURAL,
                source=f"causalitycheck:{seed.external_id}",
                external_id=spec["external_id"],
                reference_answer=spec["reference_answer"],
                author=Author(by_model=True, provenance=made_by) if made_by else NOBODY,
                answer_provenance=None if made_by else {"kind": "seed", "seed": seed.external_id},
                review=True,
                metadata=item_metadata(spec, group),
                options=[
                    {
                        "text": text,
                        "role": Option.Role.CORRECT if index == spec["answer_index"] else Option.Role.OTHER,
                    }
                    for index, text in enumerate(spec["options"])
                ],
            )
        )
    return items_create(project=group.project, items=items)


def _variant_ingredient(spec: dict) -> str:
    return {"pu": "paraphrased_context", "id": "distractor_sentence", "vcr": "invented_entity"}.get(
        spec["variant"], ""
    )


def ingredient_problem(seed: SeedData, values: dict) -> str:
    """Why ``values`` (new ingredients from a model) cannot serve this seed, or "" when they can."""
    where = f"seed {seed.external_id}"
    if "entity" in values:
        entity, invented = values["entity"].strip(), values.get("invented_entity", "").strip()
        if not any(mentions(text, entity) for text in [seed.context, seed.question, *seed.options]):
            return f"{where}: the entity {entity!r} does not appear in the seed"
        if not invented or mentions(invented, entity) or mentions(entity, invented):
            return f"{where}: the invented name {invented!r} must be new and differ from {entity!r}"
    for name in ("causal_chain", "corrupted_chain"):
        if name in values and len(chain_links(values[name])) < 2:
            return f"{where}: {name} does not read like 'A → B → C'"
    if (
        "causal_chain" in values
        and "corrupted_chain" in values
        and (" ".join(values["causal_chain"].split()) == " ".join(values["corrupted_chain"].split()))
    ):
        return f"{where}: the corrupted chain is the correct chain unchanged"
    return ""


def seed_add_ingredients(*, group: ItemGroup, values: dict, provenance: dict | None = None) -> ItemGroup:
    """Store new ingredients of a seed (call inside a transaction); ``verdicts`` entries merge by verdict."""
    group = ItemGroup.objects.select_for_update().get(pk=group.pk)
    metadata = dict(group.metadata)
    ingredients = dict(metadata.get("ingredients") or {})
    for name, value in values.items():
        if name == "verdicts":
            merged = {entry["verdict"]: entry for entry in ingredients.get("verdicts") or []}
            merged.update({entry["verdict"]: entry for entry in value})
            value = [merged[verdict] for verdict in VERDICTS if verdict in merged]
        ingredients[name] = value.strip() if isinstance(value, str) else value
        if provenance:
            metadata.setdefault("ingredient_provenance", {})[name] = provenance
    metadata["ingredients"] = ingredients
    group.metadata = metadata
    group.save(update_fields=["metadata"])
    return group
