"""The output files of lm-evaluation-harness and Inspect, read as a file of responses for the results import.

A release's harness tasks (``evaluation.releases.harnesses``) keep each item's id in their documents and name
the platform's prompting condition in their configuration, so their logs say which item each answer is of, under
which condition, by which model:

- lm-eval: ``results_<time>.json`` (the model, each task's condition) with the ``samples_<task>_<time>.jsonl``
  that ``--log_samples`` writes (each answer with its document), as files or in one zip of the output folder.
  A generated answer is the reply as written; a log-likelihood answer is the choice of highest log-probability.
- Inspect: an ``.eval`` log (read with ``inspect_ai``, the ``eval`` extra): the model, the ``condition`` task
  argument, each sample's id, epoch and completion.

``harness_result_files`` turns every such file (or set of files) into one responses file (JSON lines with item,
model, condition, repetition and response), which the import then checks and stores as it does any responses
file; other files pass unchanged. A generated reply keeps only its ``answer`` when it holds the JSON the prompt
asked for, as a benchmark run keeps it.
"""

import io
import json
import re
import tempfile
import zipfile
from pathlib import PurePosixPath

from generation.llm.parsing import NoJSONFound, extract_json

from .imported import ResultError, ResultFile, ResultsRejected

LOG_LIKELIHOOD = "log-likelihood"
_SAMPLES = re.compile(r"^samples_(?P<task>.+)_\d{4}-\d\d-\d\dT[\d\-.:]+\.jsonl$")
_RESULTS = re.compile(r"^results_[\d\-T.:]+\.json$")


def harness_result_files(files: list[ResultFile]) -> list[ResultFile]:
    """``files`` with the harnesses' outputs among them read into responses files. Raises ``ResultsRejected``
    naming the file (and line) that is not what its name says, or lm-eval samples without their results.json."""
    errors: list[ResultError] = []
    kept, results, samples = [], [], []
    for result_file in files:
        name = PurePosixPath(result_file.name).name
        if name.endswith(".eval"):
            kept.append(_inspect_log(result_file, errors))
        elif _RESULTS.match(name):
            results.append(result_file)
        elif _SAMPLES.match(name):
            samples.append(result_file)
        elif name.endswith(".zip") and _lm_eval_members(result_file):
            members_results, members_samples = _lm_eval_members(result_file)
            results += members_results
            samples += members_samples
        else:
            kept.append(result_file)
    if results or samples:
        kept.append(_lm_eval(results, samples, errors))
    if errors:
        raise ResultsRejected(errors)
    return [result_file for result_file in kept if result_file is not None]


def _lm_eval_members(result_file: ResultFile) -> tuple[list, list] | None:
    """The results and samples files inside a zip of an lm-eval output folder; None for any other zip."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(result_file.data))
    except zipfile.BadZipFile:
        return None
    results, samples = [], []
    for info in archive.infolist():
        name = PurePosixPath(info.filename).name
        if _RESULTS.match(name):
            results.append(ResultFile(f"{result_file.name}/{info.filename}", archive.read(info)))
        elif _SAMPLES.match(name):
            samples.append(ResultFile(f"{result_file.name}/{info.filename}", archive.read(info)))
    return (results, samples) if results or samples else None


def reply_answer(reply: str) -> str:
    """What a benchmark run keeps of a reply: the ``answer`` of the JSON the prompt asked for, else the reply."""
    try:
        value = extract_json(reply or "")
    except NoJSONFound:
        return (reply or "").strip()
    if isinstance(value, dict) and "answer" in value:
        return str(value["answer"])
    return (reply or "").strip()


def _responses_file(name: str, rows: list[dict]) -> ResultFile:
    data = b"".join(json.dumps(row, ensure_ascii=False).encode("utf-8") + b"\n" for row in rows)
    return ResultFile(name=name, data=data, kind="responses")


def _lm_eval(results: list[ResultFile], samples: list[ResultFile], errors: list) -> ResultFile | None:
    names = ", ".join(PurePosixPath(f.name).name for f in results + samples)
    if not results:
        errors.append(
            ResultError(
                names, 0, "", "lm-eval samples without their results_<time>.json (it names the model)"
            )
        )
        return None
    if not samples:
        errors.append(
            ResultError(
                names, 0, "", "lm-eval results without per-sample logs: run lm_eval with --log_samples"
            )
        )
        return None
    configs, model = {}, ""
    for result_file in results:
        try:
            summary = json.loads(result_file.data)
            configs.update(summary.get("configs") or {})
            model = model or _lm_eval_model(summary)
        except (ValueError, AttributeError, TypeError):
            errors.append(ResultError(result_file.name, 0, "", "is not an lm-eval results file (JSON)"))
            return None
    rows = []
    for sample_file in samples:
        task = _SAMPLES.match(PurePosixPath(sample_file.name).name).group("task")
        config = configs.get(task)
        if config is None:
            errors.append(ResultError(sample_file.name, 0, "", f"task {task!r} is not in the results file"))
            continue
        condition = str((config.get("metadata") or {}).get("condition") or task)
        for line, text in enumerate(sample_file.data.decode("utf-8", "replace").splitlines(), start=1):
            if not text.strip():
                continue
            try:
                sample = json.loads(text)
                rows.append(
                    {
                        "item": str(sample["doc"]["id"]),
                        "model": model,
                        "condition": condition,
                        "repetition": 1,
                        "response": _lm_eval_answer(sample, config),
                    }
                )
            except (ValueError, KeyError, TypeError, IndexError):
                errors.append(
                    ResultError(sample_file.name, line, "", "not an lm-eval sample of a release's task")
                )
    return _responses_file(f"{names} (lm-eval responses).jsonl", rows)


def _lm_eval_model(summary: dict) -> str:
    config = summary.get("config") or {}
    args = config.get("model_args") or {}
    if isinstance(args, str):
        args = dict(part.split("=", 1) for part in args.split(",") if "=" in part)
    return str(args.get("model") or summary.get("model_name") or config.get("model") or "lm-eval")[:100]


def _lm_eval_answer(sample: dict, config: dict) -> str:
    """A generated reply's answer; for a log-likelihood task, the choice of highest log-probability."""
    if config.get("output_type") == "multiple_choice":
        logprobs = [float(response[0][0]) for response in sample["resps"]]
        doc = sample["doc"]
        choices = doc.get("letters") or doc.get("choices")
        return str(choices[max(range(len(logprobs)), key=logprobs.__getitem__)])
    return reply_answer(str(sample["resps"][0][0]))


def _inspect_log(result_file: ResultFile, errors: list) -> ResultFile | None:
    try:
        from inspect_ai.log import read_eval_log
    except ImportError:
        errors.append(
            ResultError(result_file.name, 0, "", "reading Inspect logs needs inspect-ai (the eval extra)")
        )
        return None
    with tempfile.NamedTemporaryFile(suffix=".eval") as spool:
        spool.write(result_file.data)
        spool.flush()
        try:
            log = read_eval_log(spool.name)
        except Exception:  # noqa: BLE001 - any reading error means the same to the person importing it
            errors.append(
                ResultError(result_file.name, 0, "", "is not an Inspect log (.eval) that can be read")
            )
            return None
    model = log.eval.model.split("/", 1)[-1][:100]
    condition = str((log.eval.task_args or {}).get("condition") or (log.eval.metadata or {}).get("condition"))
    rows = []
    for sample in log.samples or []:
        completion = sample.output.completion if sample.output else ""
        rows.append(
            {
                "item": str(sample.id),
                "model": model,
                "condition": condition,
                "repetition": sample.epoch or 1,
                "response": reply_answer(completion),
            }
        )
    if not rows:
        errors.append(ResultError(result_file.name, 0, "", "the Inspect log holds no samples"))
        return None
    return _responses_file(f"{result_file.name} (Inspect responses).jsonl", rows)
