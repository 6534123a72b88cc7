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

from .docs import HarnessDocs, HarnessUnavailable, field_key, harness_docs
from .lm_eval import lm_eval_files, task_prefix
from .scoring import MODULE_NAME, scoring_source

SHIPPED = Path(__file__).resolve().parent / "shipped"
# harness name (as --format and URLs spell it) → its folder in the release's files
HARNESSES = {"lm-eval": "lm-eval", "inspect": "inspect"}

__all__ = [
    "HARNESSES",
    "HarnessFile",
    "HarnessUnavailable",
    "card_section",
    "harness_available",
    "harness_docs",
    "harness_files",
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


def _json(value) -> bytes:
    return (json.dumps(value, ensure_ascii=False, indent=2, sort_keys=True) + "\n").encode("utf-8")


def card_section(release, facts: dict) -> list[str]:
    """The card's lines on running the release in the harnesses, with the exact commands; none for a release no
    harness can ask. Built from the project's templates and the card's figures, without reading the items."""
    from .docs import harness_variants

    try:
        variants = harness_variants(release.project)
    except HarnessUnavailable:
        return []
    prefix = task_prefix(release)
    project = release.project
    heading = ["## Run it in lm-evaluation-harness and Inspect", ""]
    if not facts.get("splits", {}).get("test"):
        return heading + [
            "The harness tasks (the folders `lm-eval/` and `inspect/`) ask a release's test split, and this "
            "release has no items in its test split. Cut a release that puts items in it, every item for a "
            "benchmark:",
            "",
            "```bash",
            f"python manage.py release {project.slug} --splits 0,0,1",
            "```",
        ]
    chat = [variant for variant in variants if variant.output == "generate_until"]
    first = chat[0]
    open_answers = project.answer_format == "open"
    scored = (
        "BERTScore F1 (the platform's own implementation; `lm-eval/utils.py` imports it, so install CausalQA "
        "Studio with its `ml` extra where the harness runs)"
        if open_answers
        else "accuracy, the letter (or yes/no) read from the answer by the platform's own code"
    )
    # a class has a task only where the test split has items of it
    by_class = facts.get("by_class_split", {})
    tested = [label for label in facts.get("classes", []) if by_class.get(label, {}).get("test")]
    classes = ", ".join(f"`{prefix}_{first.key}_{field_key(label)}`" for label in tested)
    lines = [
        *heading,
        "The folders `lm-eval/` and `inspect/` hold this release's test split as tasks of the two harnesses: every "
        "prompt is the platform's own benchmark-answer prompt in the project's language, and every answer is read "
        f"by `causalqa_scoring.py`, the platform's own code. Scored by {scored}.",
        "",
        'lm-evaluation-harness (`pip install "lm-eval[api]"`), against any OpenAI-compatible chat server:',
        "",
        "```bash",
        "lm_eval --model local-chat-completions \\",
        "  --model_args model=MODEL,base_url=http://HOST/v1/chat/completions,tokenized_requests=False \\",
        f"  --tasks {prefix}_{first.key} --include_path lm-eval --apply_chat_template \\",
        "  --output_path results --log_samples",
        "```",
        "",
        "| Group | Asks |",
        "|---|---|",
    ]
    for variant in variants:
        asks = (
            "log-likelihood of each choice (a server that returns log-probabilities)"
            if variant.output == "multiple_choice"
            else f"the `{variant.condition}` prompt, answered in text"
        )
        lines.append(f"| `{prefix}_{variant.key}` | {asks} |")
    lines += [
        "",
        f"Each group prints its score per causal class ({classes}, and likewise for each group) and over the whole "
        "split, weighted by the classes' sizes, as the platform's report does; the groups `…_by_<breakdown>` "
        "(listed in `lm-eval/tasks.json`) break it down by the report's other breakdowns.",
    ]
    if any(variant.output == "multiple_choice" for variant in variants):
        lines += [
            "",
            "The log-likelihood form, with a completions server that returns log-probabilities and a local tokenizer "
            "of the model:",
            "",
            "```bash",
            "lm_eval --model local-completions \\",
            "  --model_args model=MODEL,base_url=http://HOST/v1/completions,tokenizer_backend=huggingface,"
            "tokenizer=TOKENIZER_DIR \\",
            f"  --tasks {prefix}_choice --include_path lm-eval --output_path results --log_samples",
            "```",
        ]
    lines += [
        "",
        "Inspect (`pip install inspect-ai openai`), conditions "
        + ", ".join(f"`{variant.condition}`" for variant in chat)
        + ":",
        "",
        "```bash",
        "cd inspect",
        "inspect eval task.py --model openai/MODEL --model-base-url http://HOST/v1 -M responses_api=false \\",
        f"  -T condition={first.condition} --log-dir logs",
        "```",
        "",
        "The task's metrics break the score down by class (`causal_class:<class>`) and by the report's other "
        "breakdowns; each sample's metadata holds them.",
        "",
        "The results come back into the platform as a benchmark run (its report, its judges): on the project's "
        "*Runs* page, *Import results*, give a zip of lm_eval's output folder or the `.eval` log; or",
        "",
        "```bash",
        f"python manage.py import_run_results --project {project.slug} --release {release.tag} --name NAME \\",
        "  results/*/results_*.json results/*/samples_*.jsonl",
        f"python manage.py import_run_results --project {project.slug} --release {release.tag} --name NAME \\",
        "  inspect/logs/*.eval",
        "```",
    ]
    return lines


def harness_available(project) -> bool:
    """Whether the project's releases can be asked by the harnesses (its answer format and templates)."""
    from .docs import harness_variants

    try:
        harness_variants(project)
    except HarnessUnavailable:
        return False
    return True
