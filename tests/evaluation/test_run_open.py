"""Open-answer runs end to end against the fake model server: answers under both conditions, judge scores,
rankings shown in a stored random order and undone, BERTScore, failures recorded and never dropped."""

import json

import pytest

from evaluation.models import EvalResponse, EvalRun, JudgeScore, Ranking
from evaluation.runs.services import RunInvalid, run_create
from evaluation.runs.work import unshuffle
from generation.models import GenerationJob, LLMCall
from tests.evaluation.runs import open_items, release_of, run_here, second_endpoint
from tests.fake_llm import Reply

pytestmark = pytest.mark.django_db


def test_an_open_answer_run_answers_under_both_conditions_and_the_judge_scores_and_ranks(
    project, endpoint, fake_llm
):
    open_items(project, 6)
    release = release_of(project)
    other = second_endpoint(endpoint)
    run = run_create(
        project=project,
        release=release,
        endpoints=[endpoint, other],
        judge_endpoint=endpoint,
        repetitions=2,
        decoding={"temperature": 0.3, "max_tokens": 200},
        enqueue=False,
    )

    run_here(run)

    assert run.status == EvalRun.Status.SUCCEEDED, run.error
    n_items = release.items.filter(split="test").count()
    assert n_items >= 2
    responses = EvalResponse.objects.filter(run=run)
    assert responses.count() == n_items * 2 * 2 * 2  # items × models × conditions × repetitions
    assert not responses.filter(error="").filter(text="").exists()
    # the class-informed prompt names the class; the class-agnostic one does not
    prompts = [r.messages[-1]["content"] for r in fake_llm.requests if r.body["model"] == "fake-model-1"]
    assert any("classe causal" in p for p in prompts) and any(
        "classe causal" not in p and "Pergunta" in p for p in prompts
    )
    # decoding parameters went with the answer calls
    answer_calls = [r for r in fake_llm.requests if "temperature" in r.body]
    assert answer_calls and all(
        r.body["temperature"] == 0.3 and r.body["max_tokens"] == 200 for r in answer_calls
    )
    # the judge scored every response and every reference answer, with a justification per criterion
    scores = JudgeScore.objects.filter(run=run)
    assert scores.filter(response__isnull=True).count() == n_items
    assert scores.filter(response__isnull=False).count() == responses.count()
    score = scores.first()
    assert set(score.scores) == {"adherence", "fluency", "coherence", "relevance"}
    assert set(score.justifications) == set(score.scores)
    # one ranking per item, model and repetition, of the reference and the two conditions
    rankings = Ranking.objects.filter(run=run)
    assert rankings.count() == n_items * 2 * 2
    for ranking in rankings:
        assert sorted(ranking.shown) == ["class-agnostic", "class-informed", "reference"]
        assert sorted(ranking.ranking) == sorted(ranking.shown)
    # cost of every call is kept on the run's jobs
    jobs = run.jobs.all()
    assert {job.kind for job in jobs} == {"benchmark_answer", "judge_score", "judge_ranking"}
    assert all(job.status == GenerationJob.Status.SUCCEEDED for job in jobs)
    assert sum(job.cost for job in jobs) > 0


def test_the_random_order_of_a_ranking_is_stored_with_the_call_and_undone(project, endpoint, fake_llm):
    open_items(project, 6)
    release = release_of(project)
    run = run_create(
        project=project,
        release=release,
        endpoints=[endpoint],
        judge_endpoint=endpoint,
        seed=7,
        repetitions=3,
        enqueue=False,
    )

    def responder(received):
        content = received.messages[-1]["content"]
        if "Ordene" in content:
            # the judge always puts the answer shown last first: C, B, A
            return Reply.json({"ranking": ["C", "B", "A"], "justification": "a última é melhor"})
        return Reply.json(fake_llm.example_for(received.body["response_format"]["json_schema"]["schema"]))

    fake_llm.responder = responder
    run_here(run)

    rankings = list(Ranking.objects.filter(run=run))
    assert rankings and all(r.ranking == list(reversed(r.shown)) for r in rankings)
    # the order shown is the one the call stored, and it is what the judge saw
    for ranking in rankings:
        call = LLMCall.objects.get(pk=ranking.call_id)
        assert call.request["planned"]["shown"] == ranking.shown
        prompt = call.request["messages"][-1]["content"]
        texts = dict(
            EvalResponse.objects.filter(
                run=run,
                release_item=ranking.release_item,
                endpoint=ranking.endpoint,
                repetition=ranking.repetition,
            ).values_list("condition", "text")
        )
        texts["reference"] = ranking.release_item.data["answer"]
        positions = [prompt.index(texts[source]) for source in ranking.shown]
        assert positions == sorted(positions)
    # the shuffle is seeded: the same on another run with the same seed; and not always the same order
    assert len({tuple(r.shown) for r in rankings}) > 1
    assert unshuffle(["reference", "class-informed", "class-agnostic"], ["B", "C", "A"]) == [
        "class-informed",
        "class-agnostic",
        "reference",
    ]


def test_judge_outputs_out_of_range_or_malformed_are_asked_again_then_recorded_as_failures(
    project, endpoint, fake_llm
):
    open_items(project, 4)
    release = release_of(project, ratios=(0.5, 0.0, 0.5))
    endpoint.max_concurrency = 1
    endpoint.save()
    run = run_create(
        project=project,
        release=release,
        endpoints=[endpoint],
        judge_endpoint=endpoint,
        conditions=["class-agnostic"],
        enqueue=False,
    )
    out_of_range = {
        "scores": {"adherence": 7, "fluency": 4, "coherence": 4, "relevance": 4},
        "justifications": {k: "ok" for k in ("adherence", "fluency", "coherence", "relevance")},
    }
    good = {
        "scores": {"adherence": 5, "fluency": 4, "coherence": 3, "relevance": 2},
        "justifications": {k: "ok" for k in ("adherence", "fluency", "coherence", "relevance")},
    }
    judged = {"n": 0}

    def responder(received):
        schema = received.body["response_format"]["json_schema"]["schema"]
        if "Dê uma nota" in received.prompt:
            judged["n"] += 1
            if judged["n"] <= 3:  # the first score call: out of range, then broken JSON, then out of range
                return (
                    Reply.json(out_of_range)
                    if judged["n"] != 2
                    else Reply.text('{"scores": {"adherence": 5,')
                )
            if judged["n"] == 4:  # the next one: out of range once, then right
                return Reply.json(out_of_range)
            return Reply.json(good)
        return Reply.json(fake_llm.example_for(schema))

    fake_llm.responder = responder
    run_here(run)

    scores = JudgeScore.objects.filter(run=run)
    n_items = release.items.filter(split="test").count()
    assert scores.count() == 2 * n_items  # every reference and every response has a row, failed or not
    failed = scores.exclude(error="")
    assert failed.count() == 1
    [failure] = failed
    assert failure.scores == {} and "adherence" in failure.error
    call = LLMCall.objects.get(pk=failure.call_id)
    assert call.status == LLMCall.Status.FAILED and call.n_attempts == 3
    retried = scores.filter(error="").order_by("call_id").first()
    assert retried.scores == good["scores"] and LLMCall.objects.get(pk=retried.call_id).n_attempts == 2
    # the run still succeeds, and says how many judge calls failed
    assert run.status == EvalRun.Status.SUCCEEDED


def test_a_run_request_with_problems_names_each_one(project, endpoint):
    open_items(project, 4)
    release = release_of(project)
    with pytest.raises(RunInvalid) as caught:
        run_create(
            project=project,
            release=release,
            endpoints=[],
            conditions=["few-shot"],
            repetitions=0,
            decoding={"temprature": 1},
            differences="Challenge without an equals sign",
        )
    assert set(caught.value.errors) == {"endpoints", "conditions", "repetitions", "decoding", "differences"}
    assert "class-agnostic, class-informed" in caught.value.errors["conditions"]
    assert not EvalRun.objects.exists()
