"""An Inspect task of a CausalQA Studio release: the release's test split, asked as the platform asks it.

    inspect eval task.py --model openai/<model> -T condition=<condition>

The dataset is data/<split>.jsonl beside this file, each sample's system and user messages written by the
platform's own benchmark-answer template for ``condition`` (task_config.json lists the conditions; the first is
the default). The solver generates one answer; the scorer reads it with ``causalqa_scoring`` (the platform's own
code): a letter or a yes/no is right or wrong, an open answer gets the platform's BERTScore. Each sample's
metadata holds its class and the report's breakdowns, and the metrics break the score down by them.
"""

import json
import os
import sys
from functools import lru_cache
from pathlib import Path

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ChatMessageSystem, ChatMessageUser
from inspect_ai.scorer import Score, Target, accuracy, grouped, mean, scorer, stderr
from inspect_ai.solver import TaskState, generate

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from causalqa_scoring import answer_of, choice_score, yes_no_score  # noqa: E402

CONFIG = json.loads((HERE / "task_config.json").read_text(encoding="utf-8"))
BREAKDOWNS = ["causal_class", *CONFIG["breakdowns"]]


def samples(condition: str, split: str = "test") -> list[Sample]:
    key = CONFIG["conditions"][condition]
    found = []
    with open(HERE / "data" / f"{split}.jsonl", encoding="utf-8") as lines:
        for line in lines:
            if not line.strip():
                continue
            doc = json.loads(line)
            target = {
                "multiple_choice": lambda doc: doc["gold_letters"],
                "yes_no": lambda doc: doc["gold_answer"],
                "open": lambda doc: doc["reference"],
            }[CONFIG["answer_format"]](doc)
            metadata = {name: doc.get(name, "") for name in ["id", "group", *BREAKDOWNS]}
            if CONFIG["answer_format"] == "multiple_choice":
                metadata["letters"] = doc["letters"]
            found.append(
                Sample(
                    id=doc["id"],
                    input=[
                        ChatMessageSystem(content=doc[f"system_{key}"]),
                        ChatMessageUser(content=doc[f"prompt_{key}"]),
                    ],
                    target=target,
                    metadata=metadata,
                )
            )
    return found


def _breakdown_metrics(metric) -> list:
    return [grouped(metric(), name, all=False, name_template=f"{name}:{{group_name}}") for name in BREAKDOWNS]


@scorer(metrics=[accuracy(), stderr(), *_breakdown_metrics(accuracy)])
def platform_choice():
    """Right when the letter (or yes/no) read as the platform reads it is the right one."""

    async def score(state: TaskState, target: Target) -> Score:
        reply = state.output.completion
        if CONFIG["answer_format"] == "multiple_choice":
            scored = choice_score(reply, state.metadata["letters"], list(target.target))
        else:
            scored = yes_no_score(reply, target.text)
        return Score(
            value=1 if scored["correct"] else 0,
            answer=scored["choice"],
            metadata={"unreadable": scored["unparsed"]},
        )

    return score


@lru_cache(maxsize=1)
def _bertscore_model():
    from evaluation.runs.bertscore import scorer as load

    settings = CONFIG["bertscore"]
    model_dir = os.environ.get("CAUSALQA_BERTSCORE_MODEL", "") or settings.get("model") or ""
    if model_dir and not Path(model_dir).is_dir():
        model_dir = ""
    return load(model_dir, settings.get("layer"))


@scorer(metrics=[mean(), stderr(), *_breakdown_metrics(mean)])
def platform_bertscore():
    """BERTScore F1 of the answer against the reference, by the platform's own implementation (its package and
    ml extra installed in this environment)."""

    async def score(state: TaskState, target: Target) -> Score:
        from evaluation.runs.bertscore import bertscore

        answer, _reasoning = answer_of(state.output.completion)
        [result] = bertscore([answer], [target.text], model=_bertscore_model())
        return Score(
            value=result.f1,
            answer=answer,
            metadata={"precision": result.precision, "recall": result.recall},
        )

    return score


@task
def causalqa(condition: str = CONFIG["default_condition"], split: str = "test") -> Task:
    if condition not in CONFIG["conditions"]:
        raise ValueError(
            f"unknown condition {condition!r}; this release has {', '.join(CONFIG['conditions'])}"
        )
    return Task(
        dataset=MemoryDataset(samples(condition, split), name=CONFIG["name"]),
        solver=generate(),
        scorer=platform_bertscore() if CONFIG["answer_format"] == "open" else platform_choice(),
        metadata={"release": CONFIG["name"], "condition": condition, "breakdowns": BREAKDOWNS},
    )
