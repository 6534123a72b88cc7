"""The BERTScore stage of an open-answer run: what it records, empty answers, the install without the ml extra,
and a slow model load that must not let another worker take the run over."""

import importlib.abc
import sys
import time

import pytest

from evaluation.models import EvalResponse, EvalRun, JudgeScore
from evaluation.runs import services
from evaluation.runs.bertscore import BertScore
from evaluation.runs.report import report_tables
from evaluation.runs.services import run_create
from generation import local_models
from tests.evaluation.runs import asked, open_items, release_of, run_here
from tests.fake_llm import Reply

HIDDEN = ("torch", "transformers", "sentence_transformers")


class HideMlExtra(importlib.abc.MetaPathFinder):
    """Imports of the ml extra's packages fail as if they were not installed."""

    def find_spec(self, name, path, target=None):
        if name.split(".")[0] in HIDDEN:
            raise ModuleNotFoundError(f"No module named {name!r}")
        return None


@pytest.fixture
def without_ml_extra(monkeypatch):
    """As on an install made with EXTRAS=dev: importing torch, transformers or sentence-transformers fails."""
    local_models.token_model.cache_clear()
    local_models.sentence_model.cache_clear()
    monkeypatch.setattr(sys, "meta_path", [HideMlExtra(), *sys.meta_path])
    for name in [name for name in sys.modules if name.split(".")[0] in HIDDEN]:
        monkeypatch.delitem(sys.modules, name)  # put back when the test ends
    yield
    local_models.token_model.cache_clear()
    local_models.sentence_model.cache_clear()


class StandInModel:
    """In place of the packaged model: what a run records of it, and nothing to load."""

    def described(self, *, idf):
        return {"model": "stand-in", "layer": 1, "layers": 1, "idf": idf, "window": 512}

    def windowed(self, texts):
        return 0


@pytest.mark.django_db
def test_without_the_ml_extra_a_run_finishes_with_its_judge_scores_and_says_bertscore_was_not_computed(
    project, endpoint, fake_llm, without_ml_extra
):
    open_items(project, 6)
    run = run_create(
        project=project,
        release=release_of(project),
        endpoints=[endpoint],
        judge_endpoint=endpoint,
        enqueue=False,
    )

    run_here(run)

    assert run.status == EvalRun.Status.SUCCEEDED, run.error
    assert run.notes.startswith("BERTScore not computed: the local-model extra is not installed"), run.notes
    assert "pip install -e '.[ml]'" in run.notes
    assert JudgeScore.objects.filter(run=run).exists()
    assert not EvalResponse.objects.filter(run=run, bertscore_f1__isnull=False).exists()
    tables = {table.key: table for table in report_tables([run])}
    assert "judge_scores" in tables
    assert "bertscore" not in tables


@pytest.mark.django_db
def test_a_wrong_layer_leaves_the_run_going_and_names_the_layers_there_are(project, endpoint, fake_llm):
    pytest.importorskip("torch", reason="the ml extra is not installed")
    open_items(project, 4)
    run = run_create(
        project=project, release=release_of(project), endpoints=[endpoint], bertscore_layer=40, enqueue=False
    )

    run_here(run)

    assert run.status == EvalRun.Status.SUCCEEDED, run.error
    assert "BERTScore not computed: the model has layers 1 to 6, not 40" in run.notes


@pytest.mark.ml
@pytest.mark.django_db
def test_the_run_records_model_layer_and_idf_blank_answers_fail_and_blank_text_scores_0(
    project, endpoint, fake_llm
):
    pytest.importorskip("torch", reason="the ml extra is not installed")
    from evaluation.runs.bertscore import bertscore

    open_items(project, 6)
    run = run_create(
        project=project,
        release=release_of(project, ratios=(0, 0, 1)),
        endpoints=[endpoint],
        bertscore_idf=True,
        enqueue=False,
    )
    # Items 1, 3 and 5 get a blank answer: a call whose output parses but is empty fails with the reason
    # , so a blank answer is never scored as if it were one.
    blank = ("causa 1 ", "causa 3 ", "causa 5 ")
    fake_llm.responder = lambda received: Reply.json(
        {
            "answer": "  "
            if any(key in received.prompt for key in blank)
            else "Porque a causa age sobre o efeito."
        }
    )

    run_here(run)

    assert run.status == EvalRun.Status.SUCCEEDED, run.error
    assert run.bertscore_used["model"] == local_models.PACKAGED_NAME
    assert (run.bertscore_used["layer"], run.bertscore_used["layers"]) == (6, 6)
    assert run.bertscore_used["idf"] is True
    responses = EvalResponse.objects.filter(run=run).count()  # each item under each of the run's conditions
    failed = EvalResponse.objects.filter(run=run).exclude(error="")
    assert failed.count() == responses / 2, list(failed.values_list("error", flat=True))
    assert all("missing or empty" in error for error in failed.values_list("error", flat=True))
    scored = list(EvalResponse.objects.filter(run=run, error="").values_list("bertscore_f1", flat=True))
    assert len(scored) == responses / 2, scored
    assert all(0 < f1 <= 1 for f1 in scored), scored
    [table] = [table for table in report_tables([run]) if table.key == "bertscore"]
    assert "layer 6 of 6" in table.note and "idf weighting over the references" in table.note
    # Blank text, where it reaches BERTScore (an answer or a reference), scores 0, not the model's 0.05–0.10.
    for candidate, reference in (("  ", "Porque a causa age."), ("Porque a causa age.", ""), ("", "")):
        [score] = bertscore([candidate], [reference])
        assert (score.precision, score.recall, score.f1) == (0.0, 0.0, 0.0), (candidate, reference, score)


@pytest.mark.django_db(transaction=True)
def test_a_model_that_loads_for_longer_than_the_stale_limit_keeps_its_run_and_scores_once(
    project, endpoint, fake_llm, settings, monkeypatch
):
    settings.GENERATION_STALE_SECONDS = 0.5
    settings.GENERATION_HEARTBEAT_SECONDS = 0.1
    open_items(project, 4)
    run = run_create(project=project, release=release_of(project), endpoints=[endpoint], enqueue=False)
    loads, scored, taken_over = [], [], []

    def slow_load(model_dir, layer):
        loads.append(time.monotonic())
        time.sleep(2.0)  # four times the stale limit
        return StandInModel()

    def score(candidates, references, *, model, idf):
        scored.extend(candidates)
        return [BertScore(0.5, 0.5, 0.5) for _ in candidates]

    real_beat = services._beat

    def beat_and_look(run_, owner, **fields):
        real_beat(run_, owner, **fields)
        taken_over.extend(services.runs_resume_stale())  # what beat does on another worker meanwhile

    monkeypatch.setattr(services, "bertscore_scorer", slow_load)
    monkeypatch.setattr(services, "bertscore", score)
    monkeypatch.setattr(services, "_beat", beat_and_look)
    monkeypatch.setattr(services, "run_enqueue", lambda run_id: pytest.fail(f"run {run_id} was queued again"))

    run_here(run)

    assert run.status == EvalRun.Status.SUCCEEDED, run.error
    assert run.resumed == 0
    assert taken_over == []
    assert len(loads) == 1
    responses = EvalResponse.objects.filter(run=run, error="")
    assert len(scored) == responses.count()
    assert set(responses.values_list("bertscore_f1", flat=True)) == {0.5}


@pytest.mark.django_db
def test_each_batch_scores_all_of_an_items_responses_so_its_reference_is_embedded_once(
    project, endpoint, fake_llm, monkeypatch
):
    open_items(project, 12)
    run = run_create(
        project=project,
        release=release_of(project, ratios=(0, 0, 1)),
        endpoints=[endpoint],
        repetitions=3,
        enqueue=False,
    )
    fake_llm.responder = lambda received: Reply.json({"answer": f"Porque {asked(received)}"})
    batches = []

    def score(candidates, references, *, model, idf):
        batches.append(list(zip(candidates, references)))
        return [BertScore(0.5, 0.5, 0.5) for _ in candidates]

    monkeypatch.setattr(services, "BERTSCORE_BATCH", 12)
    monkeypatch.setattr(services, "bertscore_scorer", lambda model_dir, layer: StandInModel())
    monkeypatch.setattr(services, "bertscore", score)

    run_here(run)

    assert run.status == EvalRun.Status.SUCCEEDED, run.error
    conditions = len(run.conditions)
    assert conditions == 2, run.conditions  # 6 responses an item: 2 conditions × 3 repetitions
    assert [len(batch) for batch in batches] == [12] * 6
    for batch in batches:  # two items a batch, each with all its answers: two references, not twelve
        assert len({reference for _candidate, reference in batch}) == 2, batch
    assert len({pair for batch in batches for pair in batch}) == 12  # the same answer each repetition
    assert set(EvalResponse.objects.filter(run=run).values_list("bertscore_f1", flat=True)) == {0.5}


@pytest.mark.django_db
def test_without_the_ml_extra_the_pages_say_which_stage_needs_it_before_anyone_starts_it(
    project, client_for, curator, settings, without_ml_extra
):
    from django.urls import reverse

    from annotation.models import Project

    client = client_for(curator)
    runs_page = client.get(reverse("evaluation:run_list", args=[project.slug])).content.decode()
    Project.objects.filter(pk=project.pk).update(embedding_model="minilm")
    topics_page = client.get(reverse("topics:topics", args=[project.slug])).content.decode()
    Project.objects.filter(pk=project.pk).update(embedding_model="")
    default_topics_page = client.get(reverse("topics:topics", args=[project.slug])).content.decode()

    assert 'id="bertscore-ml-extra"' in runs_page and "BERTScore needs the local-model extra" in runs_page
    assert 'id="topic-ml-extra"' in topics_page
    assert 'id="topic-ml-extra"' not in default_topics_page, "the default embedding model needs no extra"
