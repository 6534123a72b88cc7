"""Invariant checks of CausalityCheck items, shown to annotators as warnings.

Every derived item is checked as it stands now (a person or a model may have edited it):

- a variant keeps the question, options and answer of its source (for virtual causal
  reasoning: once the entity is replaced in the source);
- an irrelevant-disturbance context differs from its source only by an insertion;
- a virtual-reasoning item contains no trace of the replaced entity;
- siblings (same seed, task and variant) share question and options, and together hold the
  task's roles (a verdict quartet covers all four verdicts);
- a correct causal chain ends at the answer option.

``checklist_warnings`` works on plain snapshots (dicts), so the checks are tested without a database.
"""

import re
from collections import Counter

from django.utils.translation import gettext as _

from .seeds import TASK_ROLES, VERDICTS, chain_links, mentions, replace_entity, without_accents

_WORD = re.compile(r"\w+")
_STOPWORDS = {
    "mais",
    "menos",
    "para",
    "pela",
    "pelo",
    "pelas",
    "pelos",
    "como",
    "com",
    "que",
    "uma",
    "umas",
    "uns",
    "das",
    "dos",
    "nas",
    "nos",
    "essa",
    "esse",
    "isso",
    "este",
    "esta",
    "isto",
    "sobre",
    "entre",
    "passou",
    "passaram",
    "ficou",
    "ficaram",
    "more",
    "less",
    "with",
    "from",
    "that",
    "this",
    "their",
    "there",
    "have",
    "been",
    "became",
}


def snapshot(item, options=None) -> dict:
    """What the checks read of an item: its texts, options in letter order, answer and metadata."""
    options = list(item.options.order_by("position")) if options is None else options
    return {
        "id": item.pk,
        "question": item.question,
        "context": item.context,
        "reference_answer": item.reference_answer,
        "causal_class": item.causal_class,
        "options": [option.text for option in options],
        "correct": [option.position for option in options if option.role == "correct"],
        "metadata": item.metadata or {},
    }


def checklist_warnings(item: dict, *, source: dict | None, siblings: list[dict]) -> list[str]:
    """The broken invariants of ``item`` (a snapshot), given its source's and its siblings' snapshots
    (``siblings`` includes the item itself)."""
    meta = item["metadata"]
    warnings: list[str] = []
    variant, task = meta.get("variant"), meta.get("task")
    if variant and variant != "ps":
        warnings += _keeps_source(item, source, variant)
    if variant == "id" and source is not None:
        warnings += _only_insertion(source["context"], item["context"])
    if variant == "vcr":
        warnings += _no_trace(item)
    warnings += _siblings_agree(item, siblings, task)
    if task == "pj" and meta.get("role") == "correct":
        warnings += _chain_ends_at_answer(item)
    return warnings


def _keeps_source(item: dict, source: dict | None, variant: str) -> list[str]:
    if source is None:
        return [
            _("The source item of this variant (%(source)s) is missing.")
            % {"source": item["metadata"].get("source")}
        ]
    meta = item["metadata"]
    if variant == "vcr":
        entity, invented = meta.get("entity", ""), meta.get("invented_entity", "")

        def expected(text):
            return replace_entity(text, entity, invented) if entity else text
    else:

        def expected(text):
            return text

    problems = []
    if _same(item["question"]) != _same(expected(source["question"])):
        problems.append(_("This variant's question differs from its source's."))
    if [_same(text) for text in item["options"]] != [_same(expected(text)) for text in source["options"]]:
        problems.append(_("This variant's options differ from its source's."))
    if item["correct"] != source["correct"] or item["causal_class"] != source["causal_class"]:
        problems.append(_("This variant's answer differs from its source's."))
    elif _same(item["reference_answer"]) != _same(expected(source["reference_answer"])):
        problems.append(_("This variant's reference answer differs from its source's."))
    return problems


def _only_insertion(source: str, variant: str) -> list[str]:
    """The variant must be the source with one piece of text added somewhere, and nothing else changed."""
    before, after = _same(source), _same(variant)
    prefix = 0
    while prefix < min(len(before), len(after)) and before[prefix] == after[prefix]:
        prefix += 1
    suffix = 0
    while (
        suffix < min(len(before), len(after)) - prefix
        and before[len(before) - 1 - suffix] == after[len(after) - 1 - suffix]
    ):
        suffix += 1
    if prefix + suffix < len(before):
        return [
            _(
                "The context with the irrelevant disturbance changes the source's text instead of only adding to it."
            )
        ]
    if not after[prefix : len(after) - suffix].strip():
        return [_("The context with the irrelevant disturbance adds nothing to its source.")]
    return []


def _no_trace(item: dict) -> list[str]:
    meta = item["metadata"]
    entity, invented = meta.get("entity", ""), meta.get("invented_entity", "")
    if not entity:
        return [_("This virtual-reasoning item does not say which entity it replaced.")]
    texts = [item["question"], item["context"], item["reference_answer"], *item["options"]]
    problems = []
    if any(mentions(text, entity) for text in texts):
        problems.append(
            _("The replaced entity “%(entity)s” still appears in this virtual-reasoning item.")
            % {"entity": entity}
        )
    if invented and not any(mentions(text, invented) for text in texts):
        problems.append(_("The invented name “%(name)s” appears nowhere in this item.") % {"name": invented})
    return problems


def _siblings_agree(item: dict, siblings: list[dict], task: str | None) -> list[str]:
    problems = []
    others = [sibling for sibling in siblings if sibling["id"] != item["id"]]
    if any(_same(sibling["question"]) != _same(item["question"]) for sibling in others):
        problems.append(_("Items of the same seed, task and variant should share the question; they differ."))
    if any(
        [_same(t) for t in sibling["options"]] != [_same(t) for t in item["options"]] for sibling in others
    ):
        problems.append(_("Items of the same seed, task and variant should share the options; they differ."))
    expected = Counter(list(TASK_ROLES.get(task, {})))
    roles = Counter(sibling["metadata"].get("role") for sibling in siblings)
    if task == "cva":
        verdicts = Counter(sibling["causal_class"] for sibling in siblings)
        if verdicts != Counter(list(VERDICTS)):
            problems.append(
                _("The verdict quartet should hold each of the four verdicts once; it holds %(found)s.")
                % {"found": ", ".join(sorted(verdicts.elements())) or "—"}
            )
    elif expected and roles != expected:
        problems.append(
            _("This sibling group should hold %(expected)s; it holds %(found)s.")
            % {
                "expected": ", ".join(sorted(expected)),
                "found": ", ".join(sorted(str(r) for r in roles.elements())),
            }
        )
    return problems


def _chain_ends_at_answer(item: dict) -> list[str]:
    links = chain_links(item["reference_answer"])
    if len(links) < 2:
        return [_("The causal chain should read like “A → B → C”.")]
    if len(item["correct"]) != 1:
        return [_("The item should have exactly one correct option.")]
    last = _stems(links[-1])
    overlaps = [len(last & _stems(text)) for text in item["options"]]
    answer = item["correct"][0]
    best = max(overlaps)
    if overlaps[answer] == 0 or overlaps.count(best) > 1 or overlaps[answer] != best:
        return [
            _(
                "The correct causal chain should end at the answer option (%(letter)s); its last link does not match it."
            )
            % {"letter": chr(ord("A") + answer)}
        ]
    return []


def _same(text: str) -> str:
    return " ".join((text or "").split())


def _stems(text: str) -> set[str]:
    """Content words cut to five letters, accents and case ignored: "cultivo" and "cultivada" meet."""
    words = _WORD.findall(without_accents(text).casefold())
    return {word[:5] for word in words if len(word) >= 4 and word not in _STOPWORDS}
