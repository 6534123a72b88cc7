"""The harnesses score a release as the platform does: lm-evaluation-harness and Inspect, run by their own command
lines against the scripted model server, print per class and overall the accuracy of the platform's benchmark run
over the same scripted answers."""

import json

import pytest

from evaluation.models import EvalResponse
from evaluation.runs.report import report_tables
from evaluation.runs.services import run_create
from tests.evaluation.harness_runs import (
    CLASSES,
    export_folder,
    lm_eval_chat,
    lm_eval_outputs,
    mc_project,
    scripted_answer,
)
from tests.evaluation.runs import release_of, run_here

pytestmark = pytest.mark.django_db


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


def by_class(tables, condition) -> dict[str, float]:
    return {
        row["level"]: row["accuracy"]
        for row in tables["accuracy_by_level"].rows
        if row["series"].endswith(condition)
    }


def differing(platform: dict, harness: dict) -> list[str]:
    return sorted(item for item in platform if platform[item] != harness.get(item))


def test_lm_eval_chat_tasks_score_every_item_and_class_as_the_platform_run(
    project, endpoint, fake_llm, tmp_path
):
    mc_project(project)
    release = release_of(project, ratios=(0, 0, 1))
    run, correct, tables = platform_run(
        project, release, endpoint, fake_llm, ["zero-shot", "chain-of-thought"]
    )
    folder = export_folder(release, "lm-eval", tmp_path / "export")
    prefix = json.loads((folder / "tasks.json").read_text())["prefix"]
    for condition, key in (("zero-shot", "zero_shot"), ("chain-of-thought", "chain_of_thought")):
        out = tmp_path / f"out-{key}"
        lm_eval_chat(folder, f"{prefix}_{key}", fake_llm.base_url, out)
        results, samples = lm_eval_outputs(out)
        harness = {sample["doc"]["id"]: sample["acc"] == 1.0 for sample in samples}
        platform = {item: right for (item, cond), right in correct.items() if cond == condition}
        assert not differing(platform, harness), (
            f"{condition}: items scored differently: {differing(platform, harness)}"
        )
        [overall] = [row for row in tables["accuracy"].rows if row["series"].endswith(condition)]
        assert results["results"][f"{prefix}_{key}"]["acc,none"] == pytest.approx(overall["accuracy"])
        for causal_class, accuracy in by_class(tables, condition).items():
            assert results["results"][f"{prefix}_{key}_{causal_class}"]["acc,none"] == pytest.approx(
                accuracy
            ), causal_class
    assert set(by_class(tables, "zero-shot")) == set(CLASSES)
