"""A release as tasks of the evaluation harnesses researchers use: lm-evaluation-harness and Inspect.

``harness_files(release, harness)`` gives the files of one harness's folder (``lm-eval/`` or ``inspect/`` in the
release's zip): the documents of every split, written with the platform's own prompts (``docs``), the task
definitions (``lm_eval``, and ``shipped/inspect_task.py`` with its ``task_config.json``), and
``causalqa_scoring.py``, the platform's own code that reads an answer (``scoring``). The functions and the task
file are the same for every release (``shipped/``); what differs is data and configuration.
"""

import json
from dataclasses import dataclass
from pathlib import Path

from .docs import HarnessDocs, HarnessUnavailable, harness_docs
from .lm_eval import lm_eval_files, task_prefix
from .scoring import MODULE_NAME, scoring_source

SHIPPED = Path(__file__).resolve().parent / "shipped"
# harness name (as --format and URLs spell it) → its folder in the release's files
HARNESSES = {"lm-eval": "lm-eval", "inspect": "inspect"}

__all__ = [
    "HARNESSES",
    "HarnessFile",
    "HarnessUnavailable",
    "harness_files",
    "harness_summary",
    "task_prefix",
]


@dataclass(frozen=True)
class HarnessFile:
    path: str  # inside the release's files: lm-eval/utils.py, inspect/data/test.jsonl…
    data: bytes


def _common(folder: str, docs: HarnessDocs) -> list[HarnessFile]:
    files = [HarnessFile(f"{folder}/{MODULE_NAME}.py", scoring_source().encode("utf-8"))]
    files += [HarnessFile(f"{folder}/data/{split}.jsonl", docs.lines(split)) for split in docs.splits]
    return files


def harness_files(release, harness: str, docs: HarnessDocs | None = None) -> list[HarnessFile]:
    """The files of ``harness``'s folder for ``release``. Raises ``HarnessUnavailable`` when the release cannot be
    asked by a harness, ``KeyError`` for a harness that is not one of ``HARNESSES``."""
    folder = HARNESSES[harness]
    docs = docs or harness_docs(release)
    files = _common(folder, docs)
    if harness == "lm-eval":
        built = lm_eval_files(release, docs)
        groups = built.pop("_groups")
        files += [HarnessFile(f"{folder}/{name}", data) for name, data in sorted(built.items())]
        files.append(HarnessFile(f"{folder}/utils.py", (SHIPPED / "lm_eval_utils.py").read_bytes()))
        files.append(HarnessFile(f"{folder}/bertscore.json", _json(docs.bertscore)))
        files.append(
            HarnessFile(f"{folder}/tasks.json", _json({"prefix": task_prefix(release), "groups": groups}))
        )
    else:
        config = inspect_config(release, docs)
        files.append(HarnessFile(f"{folder}/task.py", (SHIPPED / "inspect_task.py").read_bytes()))
        files.append(HarnessFile(f"{folder}/task_config.json", _json(config)))
    return files


def inspect_config(release, docs: HarnessDocs) -> dict:
    conditions = {variant.condition: variant.key for variant in docs.variants if variant.template is not None}
    return {
        "name": f"{release.project.slug}-{release.tag}",
        "answer_format": docs.answer_format,
        "language": docs.language,
        "conditions": conditions,
        "default_condition": next(iter(conditions)),
        "breakdowns": docs.breakdowns,
        "bertscore": docs.bertscore,
    }


def harness_summary(release) -> dict | None:
    """What the card says about the harness tasks: the task prefix, the groups of each variant, the conditions,
    the breakdowns; None when the release cannot be asked by a harness."""
    try:
        docs = harness_docs(release)
    except HarnessUnavailable:
        return None
    groups = lm_eval_files(release, docs)["_groups"]
    return {"prefix": task_prefix(release), "groups": groups, "inspect": inspect_config(release, docs)}


def _json(value) -> bytes:
    return (json.dumps(value, ensure_ascii=False, indent=2, sort_keys=True) + "\n").encode("utf-8")
