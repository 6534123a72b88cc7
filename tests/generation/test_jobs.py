"""Generation jobs run in this process against the fake server: what they write, once, and what it costs."""

import threading
import time
from decimal import Decimal

import pytest
from django.db import IntegrityError, connection, transaction
from django.urls import reverse

from annotation.models import CurationDecision, Item, Judgment, Option, Project, Revision
from annotation.signals import revision_requested
from generation.models import GenerationJob, LLMCall, ProjectGenerationSettings
from generation.services import (
    JobInvalid,
    job_cancel,
    job_claim,
    job_create,
    job_retry_failed,
    jobs_resume_stale,
)
from generation.services.runner import JobRunner
from tests.factories import ItemFactory, OptionFactory
from tests.fake_llm import Reply
from topics.models import Topic

from .conftest import run_now

pytestmark = pytest.mark.django_db
Status = GenerationJob.Status


def waiting_items(project, n):
    return [
        ItemFactory(project=project, reference_answer="", answer_by="", status=Item.Status.PENDING, round=0)
        for _ in range(n)
    ]


def test_an_answer_job_answers_every_item_once_as_a_model_revision_and_sends_it_to_review(
    project, endpoint, fake_llm, curator
):
    items = waiting_items(project, 6)
    job = job_create(
        project=project,
        kind="answer",
        endpoint=endpoint,
        item_ids=[i.pk for i in items],
        user=curator,
        enqueue=False,
    )

    run_now(job)

    assert job.status == Status.SUCCEEDED and (job.total, job.done, job.failed) == (6, 6, 0)
    assert len(fake_llm.requests) == 6
    for item in Item.objects.filter(pk__in=[i.pk for i in items]):
        assert item.reference_answer.startswith("Texto gerado")
        assert (item.status, item.round, item.answer_by) == (Item.Status.IN_REVIEW, 1, Item.AnswerBy.MODEL)
        call = LLMCall.objects.get(job=job, item=item)
        assert item.answer_provenance["call_id"] == call.pk
        assert item.answer_provenance["model"] == "fake-model-1"
        assert item.answer_provenance["template"] == "answer/class-agnostic [pt-BR] v1"
        [revision] = item.revisions.filter(kind=Revision.Kind.MODEL)
        assert revision.llm_call_id == call.pk and revision.changed_fields == ["reference_answer"]


def test_each_call_records_request_attempts_tokens_cost_and_latency(project, endpoint, fake_llm):
    [item] = waiting_items(project, 1)
    fake_llm.latency = 0.05
    fake_llm.script(Reply.server_error(), Reply.json({"answer": "Porque sim."}))
    job = job_create(project=project, kind="answer", endpoint=endpoint, item_ids=[item.pk], enqueue=False)

    run_now(job)

    call = LLMCall.objects.get(job=job)
    assert call.status == LLMCall.Status.SUCCEEDED and call.parsed == {"answer": "Porque sim."}
    assert [attempt["outcome"] for attempt in call.attempts] == ["server_error", "ok"]
    assert call.n_attempts == 2 and call.raw_response == '{"answer": "Porque sim."}'
    assert call.request["messages"][-1]["content"].startswith("Pergunta: ")
    tokens_in = sum(attempt["tokens_in"] for attempt in call.attempts)
    assert call.tokens_in == tokens_in > 0 and call.tokens_out > 0
    expected = (Decimal(call.tokens_in) * Decimal("2.50") + Decimal(call.tokens_out) * 10) / 1_000_000
    assert call.cost == expected.quantize(Decimal("0.000001"))
    assert call.latency_ms >= 100
    assert (job.retried, job.tokens_in, job.cost) == (1, call.tokens_in, call.cost)


def test_a_questions_job_writes_new_generated_items_answered_by_a_second_model_then_in_review(
    project, endpoint, fake_llm
):
    topic = Topic.objects.create(
        project=project, label="Educação e carreira", top_words=["universidade", "emprego"]
    )
    ItemFactory(
        project=project,
        topic=topic,
        causal_class="counterfactual",
        question="Se eu tivesse estudado medicina?",
    )
    job = job_create(
        project=project,
        kind="questions",
        endpoint=endpoint,
        count=7,
        causal_class="counterfactual",
        topic=topic,
        batch_size=3,
        answer_endpoint=endpoint,
        answer_variant="class-informed",
        enqueue=False,
    )

    run_now(job)

    assert job.status == Status.SUCCEEDED and job.items_created == 7 and job.total == 3 + 7 == job.done
    created = Item.objects.filter(project=project, origin=Item.Origin.GENERATED)
    assert created.count() == 7
    for item in created:
        assert (item.causal_class, item.topic, item.status, item.round) == (
            "counterfactual",
            topic,
            Item.Status.IN_REVIEW,
            1,
        )
        assert (
            item.metadata["generation"]["model"] == "fake-model-1"
            and item.metadata["generation"]["rationale"]
        )
        first, answer = item.revisions.order_by("number")
        assert (
            first.kind == Revision.Kind.CREATED
            and first.llm_call_id == item.metadata["generation"]["call_id"]
        )
        assert answer.kind == Revision.Kind.MODEL and item.answer_provenance["template"].startswith(
            "answer/class-informed"
        )
    question_requests = [
        r for r in fake_llm.requests if "questions" in r.body["response_format"]["json_schema"]["name"]
    ]
    asked = [
        r.body["response_format"]["json_schema"]["schema"]["properties"]["questions"]["minItems"]
        for r in question_requests
    ]
    assert sorted(asked) == [1, 3, 3]  # batches of 3, made concurrently
    prompt = question_requests[0].prompt
    assert (
        "Educação e carreira" in prompt
        and "contrafactual" in prompt
        and "Se eu tivesse estudado medicina?" in prompt
    )
    answer_prompt = next(
        r.prompt for r in fake_llm.requests if "answer" in r.body["response_format"]["json_schema"]["name"]
    )
    assert 'Esta pergunta é da classe causal "counterfactual"' in answer_prompt


def test_generated_questions_without_an_answering_model_wait_unanswered_and_duplicates_are_left_out(
    project, endpoint, fake_llm
):
    ItemFactory(project=project, question="Se eu mudasse de área, ganharia mais?")
    fake_llm.script(
        Reply.json(
            {
                "questions": [
                    {"question": "Se eu mudasse de área, ganharia mais?", "rationale": "já existe"},
                    {"question": "E se eu tivesse feito intercâmbio?", "rationale": "r"},
                    {"question": "E se eu tivesse feito intercâmbio?", "rationale": "repetida"},
                ]
            }
        )
    )
    job = job_create(
        project=project,
        kind="questions",
        endpoint=endpoint,
        count=3,
        causal_class="counterfactual",
        enqueue=False,
    )

    run_now(job)

    assert (job.items_created, job.duplicates_skipped) == (1, 2)
    [item] = Item.objects.filter(project=project, origin=Item.Origin.GENERATED)
    assert (item.status, item.round, item.reference_answer) == (Item.Status.PENDING, 0, "")


def test_a_distractor_job_writes_four_typed_options_with_rationales_and_the_item_returns_to_review(
    project, endpoint, fake_llm
):
    project.answer_format = Project.AnswerFormat.MULTIPLE_CHOICE
    project.save(update_fields=["answer_format"])
    item = ItemFactory(
        project=project, status=Item.Status.APPROVED, round=1, reference_answer="Porque choveu."
    )
    done = ItemFactory(project=project, status=Item.Status.APPROVED)
    OptionFactory(item=done, role=Option.Role.CORRECT, position=0)
    OptionFactory(item=done, role=Option.Role.REVERSAL, position=1)
    distractors = {
        role: {"option_text": f"Errada ({role})", "reasoning": f"Por que {role} engana"}
        for role in ("contradictory", "unfounded", "reversal", "irrelevant")
    }
    fake_llm.script(Reply.json(distractors))
    job = job_create(project=project, kind="distractors", endpoint=endpoint, enqueue=False)
    assert job.params["item_ids"] == [item.pk]

    run_now(job)

    item.refresh_from_db()
    options = {option.role: option for option in item.options.all()}
    assert set(options) == {"correct", "contradictory", "unfounded", "reversal", "irrelevant"}
    assert options["correct"].text == "Porque choveu."
    assert (
        options["reversal"].text == "Errada (reversal)"
        and options["reversal"].rationale == "Por que reversal engana"
    )
    assert sorted(option.position for option in options.values()) == [0, 1, 2, 3, 4]
    assert (item.status, item.round) == (Item.Status.IN_REVIEW, 2)
    revision = item.revisions.get(kind=Revision.Kind.MODEL)
    assert revision.changed_fields == ["options"] and revision.llm_call_id == LLMCall.objects.get(job=job).pk
    prompt = fake_llm.requests[0].prompt
    assert "Opção correta: Porque choveu." in prompt and "Inversão causal" in prompt


def test_a_curators_revise_decision_starts_a_revision_job_when_the_project_has_an_endpoint(
    project, endpoint, fake_llm, curator, annotators, django_capture_on_commit_callbacks
):
    ProjectGenerationSettings.objects.create(project=project, revision_endpoint=endpoint)
    item = ItemFactory(
        project=project, status=Item.Status.NEEDS_REVISION, round=1, reference_answer="Curta demais."
    )
    Judgment.objects.create(
        item=item,
        annotator=annotators[0],
        round=1,
        vote="needs_revision",
        comment="Falta explicar o mecanismo.",
    )
    Judgment.objects.create(item=item, annotator=annotators[1], round=1, vote="accept", comment="")
    decision = CurationDecision.objects.create(
        item=item, curator=curator, round=1, decision="revise", note="Cite um exemplo."
    )
    fake_llm.script(
        Reply.json({"answer": "Uma resposta mais longa, com o mecanismo.", "changes": "expliquei"})
    )

    with django_capture_on_commit_callbacks() as callbacks:
        revision_requested.send(sender=CurationDecision, item=item, decision=decision)
    job = GenerationJob.objects.get(kind="revision")
    assert len(callbacks) == 1  # the job is handed to a worker after commit
    run_now(job)

    item.refresh_from_db()
    assert item.reference_answer == "Uma resposta mais longa, com o mecanismo."
    assert (item.status, item.round) == (Item.Status.IN_REVIEW, 2)
    assert item.revisions.get(kind=Revision.Kind.MODEL).note == "expliquei"
    prompt = fake_llm.requests[0].prompt
    assert "Curta demais." in prompt and "- Curator: Cite um exemplo." in prompt
    assert (
        "- Reviewer 1 (needs revision): Falta explicar o mecanismo." in prompt and "annotator" not in prompt
    )


def test_revising_a_multiple_choice_item_rewrites_its_correct_option_and_keeps_the_distractors(
    project, endpoint, fake_llm, curator
):
    ProjectGenerationSettings.objects.create(project=project, revision_endpoint=endpoint)
    item = ItemFactory(
        project=project, status=Item.Status.NEEDS_REVISION, round=1, reference_answer="Porque chove."
    )
    OptionFactory(
        item=item, text="Porque faz sol.", role=Option.Role.CONTRADICTORY, rationale="Contradiz.", position=0
    )
    OptionFactory(item=item, text="Porque chove.", role=Option.Role.CORRECT, rationale="", position=1)
    decision = CurationDecision.objects.create(
        item=item, curator=curator, round=1, decision="revise", note="Diga que a chuva molha o solo."
    )
    fake_llm.script(Reply.json({"answer": "Porque a chuva molha o solo.", "changes": "mecanismo"}))

    revision_requested.send(sender=CurationDecision, item=item, decision=decision)
    run_now(GenerationJob.objects.get(kind="revision"))

    item.refresh_from_db()
    options = list(item.options.order_by("position").values_list("text", "role", "rationale"))
    assert options == [
        ("Porque faz sol.", "contradictory", "Contradiz."),
        ("Porque a chuva molha o solo.", "correct", ""),
    ]
    assert item.reference_answer == "Porque a chuva molha o solo."
    assert "Porque chove." in fake_llm.requests[0].prompt


def test_without_an_endpoint_a_revise_decision_leaves_the_item_to_a_person(project, curator):
    item = ItemFactory(project=project, status=Item.Status.NEEDS_REVISION)
    decision = CurationDecision.objects.create(item=item, curator=curator, round=1, decision="revise")
    revision_requested.send(sender=CurationDecision, item=item, decision=decision)
    assert not GenerationJob.objects.exists()


def test_a_resumed_job_pays_only_for_the_calls_never_recorded(project, endpoint, fake_llm):
    items = waiting_items(project, 5)
    job = job_create(
        project=project, kind="answer", endpoint=endpoint, item_ids=[i.pk for i in items], enqueue=False
    )
    run_now(job)
    assert len(fake_llm.requests) == 5
    # As if the worker had died with two calls under way: their rows were claimed, never recorded.
    lost = LLMCall.objects.filter(job=job).order_by("pk")[:2]
    LLMCall.objects.filter(pk__in=[call.pk for call in lost]).update(
        status=LLMCall.Status.RUNNING, parsed=None
    )
    for call in lost:
        Item.objects.filter(pk=call.item_id).update(status=Item.Status.PENDING, round=0)
    GenerationJob.objects.filter(pk=job.pk).update(status=Status.QUEUED)

    run_now(job)

    assert len(fake_llm.requests) == 7  # two more, not five
    assert job.status == Status.SUCCEEDED and job.done == 5
    assert Revision.objects.filter(item__in=items, kind=Revision.Kind.MODEL).count() == 5 + 2


def test_a_result_already_recorded_is_never_applied_twice(project, endpoint):
    [item] = waiting_items(project, 1)
    job = job_create(project=project, kind="answer", endpoint=endpoint, item_ids=[item.pk], enqueue=False)
    run_now(job)
    call = LLMCall.objects.get(job=job)
    runner = JobRunner(job_id=job.pk, owner="someone else")
    runner._open_lanes()
    from generation.llm import CallResult

    late = CallResult(request={"messages": []}, attempts=[], parsed={"answer": "de novo"}, ok=True)
    with transaction.atomic():
        assert runner._record([(call, late)]) == []
    assert Item.objects.get(pk=item.pk).reference_answer != "de novo"
    assert Revision.objects.filter(item=item, kind=Revision.Kind.MODEL).count() == 1


def test_there_is_one_call_per_job_item_and_purpose(project, endpoint):
    [item] = waiting_items(project, 1)
    job = job_create(project=project, kind="answer", endpoint=endpoint, item_ids=[item.pk], enqueue=False)
    LLMCall.objects.create(job=job, item=item, purpose="answer")
    with pytest.raises(IntegrityError), transaction.atomic():
        LLMCall.objects.create(job=job, item=item, purpose="answer")
    LLMCall.objects.create(job=job, purpose="questions:1")
    with pytest.raises(IntegrityError), transaction.atomic():
        LLMCall.objects.create(job=job, purpose="questions:1")


def test_a_401_fails_the_job_at_once_with_a_clear_message(project, endpoint, fake_llm):
    items = waiting_items(project, 30)
    endpoint.max_concurrency = 1
    endpoint.save()
    fake_llm.script(Reply.unauthorized())
    job = job_create(
        project=project, kind="answer", endpoint=endpoint, item_ids=[i.pk for i in items], enqueue=False
    )

    started = time.monotonic()
    run_now(job)

    assert time.monotonic() - started < 2
    assert (
        job.status == Status.FAILED
        and "401 Unauthorized" in job.error
        and "$CAUSALQA_TEST_API_KEY" in job.error
    )
    assert len(fake_llm.requests) == 1 and job.failed == 1
    assert LLMCall.objects.filter(job=job, status=LLMCall.Status.PENDING).count() == 29


def test_a_failed_job_is_made_again_once_its_key_is_fixed_keeping_what_was_spent(
    project, endpoint, fake_llm, client_for, curator
):
    items = waiting_items(project, 6)
    endpoint.max_concurrency = 1
    endpoint.save()
    fake_llm.script(Reply.unauthorized())
    job = job_create(
        project=project, kind="answer", endpoint=endpoint, item_ids=[i.pk for i in items], enqueue=False
    )
    run_now(job)
    assert (job.status, job.failed, job.done) == (Status.FAILED, 1, 0)
    refused = LLMCall.objects.get(job=job, status=LLMCall.Status.FAILED)

    page = (
        client_for(curator)
        .get(reverse("generation:job_detail", args=[project.slug, job.pk]))
        .content.decode()
    )
    assert 'id="job-retry"' in page
    assert job_retry_failed(job=job) == 6  # the refused call and the five never made
    job.refresh_from_db()
    assert (job.status, job.failed, job.error) == (Status.QUEUED, 0, "")
    assert job_retry_failed(job=job) == 0  # queued already: nothing more to do

    run_now(job)
    assert (job.status, job.done, job.failed) == (Status.SUCCEEDED, 6, 0)
    refused.refresh_from_db()
    assert refused.status == LLMCall.Status.SUCCEEDED and refused.n_attempts == 2
    assert refused.attempts[0]["status"] == 401  # the first run's attempt is kept
    assert Item.objects.filter(pk__in=[i.pk for i in items], answer_by="model").count() == 6
    assert len(fake_llm.requests) == 7
    assert job_retry_failed(job=job) == 0


def test_a_wrong_model_name_fails_the_job_without_retrying(project, endpoint, fake_llm):
    items = waiting_items(project, 10)
    fake_llm.responder = lambda received: Reply.model_not_found(received.body["model"])
    job = job_create(
        project=project, kind="answer", endpoint=endpoint, item_ids=[i.pk for i in items], enqueue=False
    )

    run_now(job)

    assert job.status == Status.FAILED and "404" in job.error and "fake-model-1" in job.error
    assert len(fake_llm.requests) <= endpoint.max_concurrency


@pytest.mark.django_db(transaction=True)
def test_cancelling_a_running_job_stops_new_calls_promptly(project, endpoint, fake_llm):
    items = waiting_items(project, 60)
    fake_llm.latency = 0.1
    endpoint.max_concurrency = 2
    endpoint.save()
    job = job_create(
        project=project, kind="answer", endpoint=endpoint, item_ids=[i.pk for i in items], enqueue=False
    )
    assert job_claim(job_id=job.pk, owner="test-run")
    stopped = {}

    def cancel_soon():
        time.sleep(0.5)
        GenerationJob.objects.filter(pk=job.pk).update(cancel_requested=True)
        stopped["at"] = time.monotonic()
        connection.close()

    from generation.services import job_run

    threading.Thread(target=cancel_soon).start()
    job_run(job_id=job.pk, owner="test-run")
    finished = time.monotonic()
    job.refresh_from_db()

    assert job.status == Status.CANCELLED
    assert finished - stopped["at"] < 1.0
    assert 4 <= len(fake_llm.requests) < 20 and job.done == len(fake_llm.requests)
    assert LLMCall.objects.filter(job=job, status=LLMCall.Status.PENDING).count() == 60 - job.done


def test_a_queued_job_cancelled_never_runs(project, endpoint, fake_llm):
    items = waiting_items(project, 2)
    job = job_create(
        project=project, kind="answer", endpoint=endpoint, item_ids=[i.pk for i in items], enqueue=False
    )
    job_cancel(job=job)
    assert job.status == Status.CANCELLED
    assert not job_claim(job_id=job.pk, owner="late worker")
    assert fake_llm.requests == []


def test_a_running_job_whose_worker_stopped_beating_is_queued_again(project, endpoint, settings):
    settings.GENERATION_STALE_SECONDS = 5
    items = waiting_items(project, 2)
    job = job_create(
        project=project, kind="answer", endpoint=endpoint, item_ids=[i.pk for i in items], enqueue=False
    )
    job_claim(job_id=job.pk, owner="dead worker")
    assert jobs_resume_stale() == []  # its heartbeat is fresh
    from datetime import timedelta

    from django.utils import timezone

    GenerationJob.objects.filter(pk=job.pk).update(heartbeat_at=timezone.now() - timedelta(seconds=10))
    from unittest import mock

    with mock.patch("generation.services.jobs.job_enqueue") as enqueue:
        assert jobs_resume_stale() == [job.pk]
    enqueue.assert_called_once_with(job.pk)
    job.refresh_from_db()
    assert (job.status, job.owner, job.resumed) == (Status.QUEUED, "", 1)


@pytest.mark.django_db(transaction=True)
def test_a_run_that_lost_its_job_to_another_worker_stops(project, endpoint, fake_llm):
    items = waiting_items(project, 40)
    fake_llm.latency = 0.05
    endpoint.max_concurrency = 1
    endpoint.save()
    job = job_create(
        project=project, kind="answer", endpoint=endpoint, item_ids=[i.pk for i in items], enqueue=False
    )
    job_claim(job_id=job.pk, owner="first")

    def take_over():
        GenerationJob.objects.filter(pk=job.pk).update(owner="second")
        connection.close()

    threading.Timer(0.4, take_over).start()

    from generation.services import job_run

    assert job_run(job_id=job.pk, owner="first")["status"] == "taken over"
    assert len(fake_llm.requests) < 40
    job.refresh_from_db()
    assert job.status == Status.RUNNING and job.owner == "second"


@pytest.mark.parametrize(
    "arguments, field",
    [
        ({"kind": "questions", "count": 0, "causal_class": "counterfactual"}, "count"),
        ({"kind": "questions", "count": 5, "causal_class": "causal"}, "causal_class"),
        ({"kind": "answer", "item_ids": []}, "item_ids"),
        ({"kind": "answer", "item_ids": [999999]}, "item_ids"),
        ({"kind": "distractors"}, "item_ids"),
        ({"kind": "judge_score"}, "kind"),
    ],
)
def test_bad_job_requests_name_the_field_at_fault(project, endpoint, arguments, field):
    with pytest.raises(JobInvalid) as caught:
        job_create(project=project, endpoint=endpoint, enqueue=False, **arguments)
    assert field in caught.value.errors
    assert not GenerationJob.objects.exists()


def test_items_already_approved_cannot_be_answered_again(project, endpoint):
    item = ItemFactory(project=project, status=Item.Status.APPROVED)
    with pytest.raises(JobInvalid, match=f"items must be pending, needs revision: {item.pk}"):
        job_create(project=project, kind="answer", endpoint=endpoint, item_ids=[item.pk], enqueue=False)


def test_an_endpoint_of_another_project_cannot_be_used(project, endpoint):
    other = Project.objects.create(name="Other", slug="other")
    endpoint.project = other
    endpoint.save()
    [item] = waiting_items(project, 1)
    with pytest.raises(JobInvalid, match="endpoint"):
        job_create(project=project, kind="answer", endpoint=endpoint, item_ids=[item.pk], enqueue=False)


def test_a_job_may_name_more_items_than_one_query_can_list(project, endpoint):
    from annotation.importing.funnel import text_key

    Item.objects.bulk_create(
        Item(project=project, question=f"Pergunta longa número {n}?", text_key=text_key(f"longa {n}"))
        for n in range(33_000)
    )
    ids = list(project.items.values_list("pk", flat=True))
    job = job_create(project=project, kind="answer", endpoint=endpoint, item_ids=ids, enqueue=False)
    from generation.services.work import work_for

    assert len(work_for(job).plan()) == job.total == 33_000
