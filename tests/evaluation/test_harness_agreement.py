"""The harnesses score a release as the platform does: lm-evaluation-harness and Inspect, run by their own command
lines against the scripted model server, print per class and overall the accuracy of the platform's benchmark run
over the same scripted answers."""

import json
import zipfile

import pytest
from django.core.management import call_command
from django.urls import reverse

from evaluation.models import EvalResponse, EvalRun
from evaluation.runs.report import report_tables
from evaluation.runs.services import run_create
from tests.evaluation.harness_runs import (
    CLASSES,
    export_folder,
    inspect_eval,
    inspect_results,
    lm_eval_chat,
    lm_eval_log_likelihood,
    lm_eval_outputs,
    local_tokenizer_dir,
    mc_project,
    right,
    scripted_answer,
    scripted_logprobs,
    unreadable,
)
from tests.evaluation.runs import release_of, run_here

pytestmark = pytest.mark.django_db
N_ITEMS = 24
# the scripted model's share of right answers (unreadable ones count as wrong, as in a benchmark run)
KNOWN_SHARE = sum(right(n) and not unreadable(n) for n in range(N_ITEMS)) / N_ITEMS


def platform_run(project, release, endpoint, fake_llm, conditions):
    fake_llm.responder = scripted_answer
    run = run_create(
        project=project, release=release, endpoints=[endpoint], conditions=conditions, enqueue=False
    )
    run_here(run)
    correct = {
        (response.release_item.data["id"], response.condition): bool(response.correct)
        for response in EvalResponse.objects.filter(run=run).select_related("release_item")
    }
    tables = {table.key: table for table in report_tables([run])}
    return run, correct, tables


def sent(fake_llm) -> list[tuple[str, ...]]:
    """The system and user message of each request to the scripted server, sorted."""
    return sorted(
        tuple(f"{message['role']}: {message['content']}" for message in received.messages[:2])
        for received in fake_llm.requests
    )


def by_class(tables, condition) -> dict[str, float]:
    return {
        row["level"]: row["accuracy"]
        for row in tables["accuracy_by_level"].rows
        if row["series"].endswith(condition)
    }


def differing(platform: dict, harness: dict) -> list[str]:
    return sorted(item for item in platform if platform[item] != harness.get(item))


def test_lm_eval_chat_tasks_score_every_item_and_class_as_the_platform_run_and_come_back(
    project, endpoint, fake_llm, tmp_path, client, curator
):
    mc_project(project, N_ITEMS)
    release = release_of(project, ratios=(0, 0, 1))
    run, correct, tables = platform_run(
        project, release, endpoint, fake_llm, ["zero-shot", "chain-of-thought"]
    )
    folder = export_folder(release, "lm-eval", tmp_path / "export")
    prefix = json.loads((folder / "tasks.json").read_text())["prefix"]
    asked_by_platform = sent(fake_llm)
    fake_llm.reset()
    lm_eval_chat(folder, f"{prefix}_zero_shot,{prefix}_chain_of_thought", fake_llm.base_url, tmp_path / "out")
    # the harness sends the platform's own words: the same system and user messages for every item and condition
    assert sent(fake_llm) == asked_by_platform
    results, samples = lm_eval_outputs(tmp_path / "out")
    for condition, key in (("zero-shot", "zero_shot"), ("chain-of-thought", "chain_of_thought")):
        harness = {
            sample["doc"]["id"]: sample["acc"] == 1.0
            for task, lines in samples.items()
            if task.startswith(f"{prefix}_{key}_")
            for sample in lines
        }
        platform = {item: right for (item, cond), right in correct.items() if cond == condition}
        assert not differing(platform, harness), (
            f"{condition}: items scored differently: {differing(platform, harness)}"
        )
        [overall] = [row for row in tables["accuracy"].rows if row["series"].endswith(condition)]
        assert overall["accuracy"] == pytest.approx(KNOWN_SHARE)
        assert results["results"][f"{prefix}_{key}"]["acc,none"] == pytest.approx(overall["accuracy"])
        for causal_class, accuracy in by_class(tables, condition).items():
            assert results["results"][f"{prefix}_{key}_{causal_class}"]["acc,none"] == pytest.approx(
                accuracy
            ), causal_class
    assert set(by_class(tables, "zero-shot")) == set(CLASSES)

    # the multiple-choice form: lm-eval's local-completions, the choice of highest log-probability
    from transformers import AutoTokenizer

    fake_llm.logprob_responder = scripted_logprobs(AutoTokenizer.from_pretrained(local_tokenizer_dir()))
    lm_eval_log_likelihood(folder, f"{prefix}_choice", fake_llm.base_url, tmp_path / "out-choice")
    choice_results, choice_samples = lm_eval_outputs(tmp_path / "out-choice")
    harness = {
        sample["doc"]["id"]: sample["acc"] == 1.0 for lines in choice_samples.values() for sample in lines
    }
    platform = {item: right for (item, cond), right in correct.items() if cond == "zero-shot"}
    assert not differing(platform, harness), (
        f"log-likelihood: items scored differently: {differing(platform, harness)}"
    )
    assert choice_results["results"][f"{prefix}_choice"]["acc,none"] == pytest.approx(KNOWN_SHARE)
    for causal_class, accuracy in by_class(tables, "zero-shot").items():
        assert choice_results["results"][f"{prefix}_choice_{causal_class}"]["acc,none"] == pytest.approx(
            accuracy
        )

    # the output folder, zipped, comes back through the page's results import as a run with the same report
    archive = tmp_path / "lm-eval-output.zip"
    with zipfile.ZipFile(archive, "w") as out:
        for path in [*(tmp_path / "out").rglob("*.json*"), *(tmp_path / "out-choice").rglob("*.json*")]:
            out.write(path, path.relative_to(tmp_path))
    client.force_login(curator)
    with open(archive, "rb") as upload:
        response = client.post(
            reverse("evaluation:run_import", args=[project.slug]),
            {"release": release.pk, "split": "test", "name": "lm-eval", "responses": upload},
        )
    assert response.status_code == 302, response.content.decode()[-3000:]
    from evaluation.models import ResultsImport
    from evaluation.tasks import import_run_results_task

    import_run_results_task(ResultsImport.objects.latest("pk").pk)  # what the worker runs
    imported = EvalRun.objects.exclude(pk=run.pk).get()
    assert sorted(imported.conditions) == ["chain-of-thought", "log-likelihood", "zero-shot"]
    assert imported.endpoints.get().name == "fake-model-1"
    imported_tables = {table.key: table for table in report_tables([imported])}
    for condition in ("zero-shot", "chain-of-thought"):
        assert by_class(imported_tables, condition) == pytest.approx(by_class(tables, condition)), condition
    assert by_class(imported_tables, "log-likelihood") == pytest.approx(by_class(tables, "zero-shot"))


def test_inspect_task_scores_every_item_and_class_as_the_platform_run_and_comes_back(
    project, endpoint, fake_llm, tmp_path
):
    mc_project(project, N_ITEMS)
    release = release_of(project, ratios=(0, 0, 1))
    run, correct, tables = platform_run(project, release, endpoint, fake_llm, ["zero-shot"])
    folder = export_folder(release, "inspect", tmp_path / "export")
    inspect_eval(folder, "zero-shot", fake_llm.base_url, tmp_path / "logs")
    log, values, metrics = inspect_results(tmp_path / "logs")
    harness = {item: value == 1 for item, value in values.items()}
    platform = {item: right for (item, _condition), right in correct.items()}
    assert not differing(platform, harness), f"items scored differently: {differing(platform, harness)}"
    [overall] = tables["accuracy"].rows
    assert overall["accuracy"] == pytest.approx(KNOWN_SHARE)
    assert metrics["accuracy"] == pytest.approx(overall["accuracy"])
    for causal_class, accuracy in by_class(tables, "zero-shot").items():
        assert metrics[f"causal_class:{causal_class}"] == pytest.approx(accuracy), causal_class
    assert {sample.metadata["causal_class"] for sample in log.samples} == set(CLASSES)

    # the .eval log comes back through the results import command as a run with the same report
    [log_path] = (tmp_path / "logs").glob("*.eval")
    call_command(
        "import_run_results",
        "--project",
        project.slug,
        "--release",
        release.tag,
        "--name",
        "inspect",
        str(log_path),
    )
    imported = EvalRun.objects.exclude(pk=run.pk).get()
    assert imported.conditions == ["zero-shot"]
    imported_tables = {table.key: table for table in report_tables([imported])}
    assert by_class(imported_tables, "zero-shot") == pytest.approx(by_class(tables, "zero-shot"))
    assert imported_tables["accuracy"].rows[0]["accuracy"] == pytest.approx(KNOWN_SHARE)
