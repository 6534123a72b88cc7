"""A release leaves the platform as lm-evaluation-harness and Inspect tasks: through the command, the release's
zip, the page and the API; the tasks ask the platform's own prompts, load in lm-eval, and score open answers with
the platform's BERTScore."""

import importlib.util
import io
import json
import re
import sys
import zipfile

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from evaluation.releases.export import zip_stream
from evaluation.releases.harnesses import harness_files
from evaluation.runs.harness_results import harness_result_files
from evaluation.runs.imported import ResultFile, ResultsRejected
from tests.evaluation.harness_runs import OFFLINE, export_folder, mc_project
from tests.evaluation.runs import open_items, release_of, yes_no_items
from tests.factories import api_token_key

pytestmark = pytest.mark.django_db


@pytest.fixture
def mc_release(project):
    mc_project(project, 9)
    return release_of(project, ratios=(0, 0, 1))


def test_export_command_writes_only_the_harness_folder_asked_for(mc_release, tmp_path):
    call_command(
        "export_release", "causal-qa", "v1", "--out", str(tmp_path / "lm"), "--format", "lm-eval", verbosity=0
    )
    written = {
        path.relative_to(tmp_path / "lm").as_posix()
        for path in (tmp_path / "lm").rglob("*")
        if path.is_file()
    }
    assert {
        "lm-eval/utils.py",
        "lm-eval/causalqa_scoring.py",
        "lm-eval/data/test.jsonl",
        "lm-eval/tasks.json",
    } <= written
    assert "lm-eval/causal_qa_v1_zero_shot.yaml" in written and "lm-eval/causal_qa_v1_choice.yaml" in written
    assert not any(name.startswith(("inspect/", "data/")) for name in written)
    call_command(
        "export_release", "causal-qa", "v1", "--out", str(tmp_path / "in"), "--format", "inspect", verbosity=0
    )
    assert (tmp_path / "in/inspect/task.py").is_file() and (
        tmp_path / "in/inspect/task_config.json"
    ).is_file()


def test_export_command_names_the_formats_it_knows(mc_release, tmp_path):
    with pytest.raises(CommandError, match="lm-eval, inspect"):
        call_command("export_release", "causal-qa", "v1", "--out", str(tmp_path), "--format", "lm_eval")


def test_a_rating_scale_release_says_why_no_harness_can_run_it(project, tmp_path):
    open_items(project, 3)
    release = release_of(project, ratios=(0, 0, 1))
    project.answer_format = project.AnswerFormat.RATING
    project.save(update_fields=["answer_format"])
    with pytest.raises(
        CommandError, match="lm-eval: a harness asks open, multiple-choice or yes/no questions"
    ):
        call_command(
            "export_release", "causal-qa", release.tag, "--out", str(tmp_path), "--format", "lm-eval"
        )


def test_the_release_zip_holds_both_harness_folders_with_their_checksums(mc_release):
    archive = zipfile.ZipFile(io.BytesIO(b"".join(zip_stream(mc_release))))
    names = archive.namelist()
    assert "causal-qa-v1/lm-eval/utils.py" in names and "causal-qa-v1/inspect/task.py" in names
    sums = archive.read("causal-qa-v1/checksums.txt").decode()
    assert "  lm-eval/data/test.jsonl\n" in sums and "  inspect/task_config.json\n" in sums
    assert names[-1] == "causal-qa-v1/checksums.txt"


def test_the_card_gives_the_exact_commands(mc_release):
    card = mc_release.card
    assert "## Run it in lm-evaluation-harness and Inspect" in card
    assert "lm_eval --model local-chat-completions" in card
    assert "--tasks causal_qa_v1_zero_shot --include_path lm-eval --apply_chat_template" in card
    assert "--tasks causal_qa_v1_choice --include_path lm-eval" in card
    assert "inspect eval task.py --model openai/MODEL" in card and "-T condition=zero-shot" in card
    assert "import_run_results --project causal-qa --release v1" in card


def test_page_and_api_hand_out_each_harness_folder_as_a_zip(mc_release, client_for, annotator, outsider):
    client = client_for(annotator)
    page = client.get(reverse("evaluation:release_detail", args=["causal-qa", 1]))
    for harness in ("lm-eval", "inspect"):
        assert (
            reverse("evaluation:release_harness_download", args=["causal-qa", 1, harness])
            in page.content.decode()
        )
    response = client.get(reverse("evaluation:release_harness_download", args=["causal-qa", 1, "lm-eval"]))
    assert response.status_code == 200 and response["Content-Type"] == "application/zip"
    names = zipfile.ZipFile(io.BytesIO(response.content)).namelist()
    assert "causal-qa-v1/lm-eval/causal_qa_v1_zero_shot.yaml" in names
    assert (
        client.get(reverse("evaluation:release_harness_download", args=["causal-qa", 1, "helm"])).status_code
        == 404
    )
    outsiders = client_for(outsider).get(
        reverse("evaluation:release_harness_download", args=["causal-qa", 1, "inspect"])
    )
    assert outsiders.status_code == 404
    token = {"HTTP_AUTHORIZATION": f"Token {api_token_key(annotator)}"}
    api = client_for(annotator).get("/api/v1/projects/causal-qa/releases/v1/harnesses/inspect/", **token)
    assert api.status_code == 200, api.content
    assert "causal-qa-v1/inspect/task.py" in zipfile.ZipFile(io.BytesIO(api.content)).namelist()
    unknown = client.get("/api/v1/projects/causal-qa/releases/v1/harnesses/helm/", **token)
    assert unknown.status_code == 404 and "lm-eval, inspect" in unknown.json()["detail"]


def test_documents_carry_the_platform_prompts_the_gold_and_the_breakdowns(mc_release):
    [data] = [f.data for f in harness_files(mc_release, "lm-eval") if f.path == "lm-eval/data/test.jsonl"]
    docs = [json.loads(line) for line in data.splitlines()]
    doc = next(doc for doc in docs if doc["id"] == "caso-1")
    assert doc["prompt_zero_shot"].startswith("Pergunta: Qual opção explica o caso 1?\n\nOpções:\nA) ")
    assert (
        'Responda com a letra dela (A, B, C, D, E) em JSON: {"answer": "<letra>"}' in doc["prompt_zero_shot"]
    )
    assert doc["system_zero_shot"].startswith("Você responde perguntas de raciocínio causal.")
    assert doc["letters"][doc["gold"]] == doc["gold_letters"][0]
    assert doc["options"][doc["gold"]] == "correct do caso 1"
    assert doc["causal_class"] == "interventional" and doc["task"] == "PJ"
    assert doc["choice_prompt"].endswith("\n\nResposta:")


def test_lm_eval_builds_the_multiple_choice_task_with_options_and_gold(mc_release, tmp_path, monkeypatch):
    for name, value in OFFLINE.items():
        monkeypatch.setenv(name, value)
    from lm_eval.tasks import TaskManager, get_task_dict

    folder = export_folder(mc_release, "lm-eval", tmp_path)
    tasks = get_task_dict(["causal_qa_v1_choice"], TaskManager(include_path=str(folder)))
    found = {}
    for task in _leaf_tasks(tasks):
        for doc in task.test_docs():
            found[doc["id"]] = (task.OUTPUT_TYPE, task.doc_to_choice(doc), task.doc_to_target(doc))
    assert len(found) == 9
    output_type, choices, gold = found["caso-1"]
    assert output_type == "multiple_choice" and choices == ["A", "B", "C", "D", "E"]
    assert gold == "ABCDE".index(next(d for d in _docs(folder) if d["id"] == "caso-1")["gold_letters"][0])


def _leaf_tasks(tasks):
    for value in tasks.values():
        if isinstance(value, dict):
            yield from _leaf_tasks(value)
        else:
            yield value


def _docs(folder):
    return [json.loads(line) for line in (folder / "data/test.jsonl").read_text().splitlines()]


def test_yes_no_documents_ask_the_yes_no_prompt_with_the_gold_answer(project):
    yes_no_items(project, groups=2, per_group=4)
    release = release_of(project, ratios=(0, 0, 1))
    [data] = [f.data for f in harness_files(release, "inspect") if f.path == "inspect/data/test.jsonl"]
    docs = [json.loads(line) for line in data.splitlines()]
    assert {doc["gold_answer"] for doc in docs} == {"yes", "no"}
    assert all(doc["choices"] == ["sim", "não"] and doc["choices"][doc["gold"]] for doc in docs)
    assert all("Responda sim ou não em JSON" in doc["prompt_zero_shot"] for doc in docs)


def test_open_answers_are_scored_by_the_platform_bertscore_inside_the_harness(project, tmp_path):
    pytest.importorskip("torch")
    from evaluation.runs.bertscore import bertscore

    open_items(project, 3)
    release = release_of(project, ratios=(0, 0, 1))
    folder = export_folder(release, "lm-eval", tmp_path)
    assert {"class_agnostic", "class_informed"} == {
        group["variant"] for group in json.loads((folder / "tasks.json").read_text())["groups"]
    }
    spec = importlib.util.spec_from_file_location("release_utils", folder / "utils.py")
    utils = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(utils)
    doc = utils.read_docs("test")[0]
    assert 'Esta pergunta é da classe causal "' in doc["prompt_class_informed"]
    scored = utils.score_open(doc, ['{"answer": "Porque a causa age."}'])
    [expected] = bertscore(["Porque a causa age."], [doc["reference"]])
    assert scored["bertscore_f1"] == pytest.approx(expected.f1)
    sys.modules.pop("causalqa_scoring", None)


def test_lm_eval_samples_without_their_results_file_are_refused_by_name():
    sample = ResultFile("samples_causal_qa_v1_zero_shot_associational_2026-01-01T10-00-00.1.jsonl", b"{}\n")
    with pytest.raises(ResultsRejected, match="without their results_<time>.json"):
        harness_result_files([sample])
    broken = ResultFile("run.eval", b"not a log")
    with pytest.raises(ResultsRejected, match="run.eval: is not an Inspect log"):
        harness_result_files([broken])


def _task_names(release, tmp_path) -> set[str]:
    folder = export_folder(release, "lm-eval", tmp_path / f"{release.project.slug}-{release.tag}")
    return {path.stem for path in folder.glob("*.yaml") if not path.name.startswith("_")}


def _named_tasks(card: str, prefix: str) -> set[str]:
    return set(re.findall(rf"`?({prefix}_[a-z0-9_]+)`?", card)) - {f"{prefix}_by"}


def test_every_task_the_card_names_is_in_the_release_folder(project, tmp_path):
    mc_project(project, 9)
    release = release_of(project, ratios=(0.8, 0.1, 0.1))  # a test split holding only some of the classes
    named = _named_tasks(release.card, "causal_qa_v1")
    assert named and "causal_qa_v1_zero_shot" in named
    assert named <= _task_names(release, tmp_path), named - _task_names(release, tmp_path)


def test_a_release_without_test_items_says_how_to_cut_one_the_harnesses_can_run(project):
    mc_project(project, 6)
    release = release_of(project, ratios=(1, 0, 0))
    card = release.card
    assert "## Run it in lm-evaluation-harness and Inspect" in card
    assert "lm_eval --model" not in card and "inspect eval" not in card
    assert "no items in its test split" in card
    assert "python manage.py release causal-qa --splits 0,0,1" in card


def test_the_demo_releases_cards_give_the_commands_of_tasks_their_folders_hold(tmp_path):
    from annotation.demo import demo_load_all
    from evaluation.models import Release
    from evaluation.releases.harnesses import harness_available, task_prefix

    demo_load_all()
    asked = [release for release in Release.objects.all() if harness_available(release.project)]
    assert {release.project.answer_format for release in asked} == {"multiple_choice", "yes_no", "open"}
    for release in asked:
        card = release.card
        prefix = task_prefix(release)
        assert "lm_eval --model local-chat-completions" in card, release.project.slug
        assert "inspect eval task.py --model openai/MODEL" in card, release.project.slug
        named = _named_tasks(card, prefix)
        assert named and named <= _task_names(release, tmp_path), (release.project.slug, named)
