"""How a benchmark run asks each CausalityCheck task (paper §2.1, §3 and Table 1), in every variant.

The original problem is the seed's four-option question, graded on the seed's letter (chance 1/4). The other
tasks are their own questions with their own options, gold answer and chance:

- answerable judging: can the question be answered from the context? A) yes B) no — gold from the item's role
  (the answerable or the unanswerable context); chance 1/2;
- process judging: is this causal chain correct? A) correct B) incorrect — the chain is the item's reference
  answer, gold from its role (the correct or the corrupted chain); chance 1/2;
- causal validity assessing: which of the paper's four verdicts fits this conclusion? A)–D) — the conclusion is
  the item's reference answer, gold its verdict; chance 1/4.

Each task's prompt is the text below (English and Portuguese), rendered into the run's benchmark-answer template
as its question and options, so the condition (zero-shot, few-shot, chain of thought) still applies; the answer is
read as a letter among the task's own options.
"""

import json

from django.utils import translation
from django.utils.translation import gettext as _

from .seeds import VERDICTS


def task_question(record: dict, language: str) -> dict | None:
    """{"task", "question", "options": [{"letter", "text"}], "correct": {letters}} for a released checklist item,
    or None for the original problem (asked as it is) and for records that are not CausalityCheck items."""
    meta = record.get("metadata") or {}
    if isinstance(meta, str):
        try:
            meta = json.loads(meta)
        except ValueError:
            return None
    task, label = meta.get("task"), record.get("causal_class", "")
    if task not in ("aj", "pj", "cva"):
        return None
    with translation.override(language):
        problem = _problem(record)
        if task == "aj":
            question = _(
                "%(problem)s\n\nDoes the context give everything needed to answer this question (every "
                "cause the answer depends on)?"
            ) % {"problem": problem}
            texts, gold = (
                [_("Yes: it can be answered"), _("No: it cannot be answered from the context")],
                (0 if label == "answerable" else 1),
            )
        elif task == "pj":
            question = _(
                "%(problem)s\n\nProposed causal chain: %(chain)s\n\nIs this causal chain correct?"
            ) % {"problem": problem, "chain": record.get("answer", "")}
            texts, gold = [_("Correct"), _("Incorrect")], 0 if label == "valid_chain" else 1
        else:
            question = _(
                "%(problem)s\n\nProposed conclusion: %(conclusion)s\n\nWhich verdict describes this "
                "conclusion?"
            ) % {"problem": problem, "conclusion": record.get("answer", "")}
            texts = [str(name) for name in VERDICTS.values()]
            gold = list(VERDICTS).index(label) if label in VERDICTS else -1
    options = [{"letter": chr(ord("A") + position), "text": text} for position, text in enumerate(texts)]
    return {
        "task": task,
        "question": question,
        "options": options,
        "correct": {options[gold]["letter"]} if gold >= 0 else set(),
    }


def _problem(record: dict) -> str:
    """The seed's question with its options, as the task shows the problem it is about."""
    options = "\n".join(f"{option['letter']}) {option['text']}" for option in record.get("options") or [])
    return f"{record['question']}\n{options}" if options else record["question"]
