"""Class balance: gaps against targets (of the project or a topic), "fill the gap" proposals with their
counts and estimated cost, the jobs they start, the funnel table and the chart on the project page."""

from decimal import Decimal

import pytest
from django.urls import reverse

from annotation.models import Item
from generation.models import GenerationJob
from generation.services import JobInvalid
from tests.factories import ItemFactory
from topics.balance import (
    ANSWER_OUTPUT_TOKENS,
    QUESTION_OUTPUT_TOKENS,
    class_gaps,
    estimate,
    gap_jobs_start,
    gap_proposals,
)
from topics.models import Topic

pytestmark = pytest.mark.django_db
Status = Item.Status


def items(project, causal_class, n, **fields):
    return [ItemFactory(project=project, causal_class=causal_class, **fields) for _ in range(n)]


@pytest.fixture
def balanced(project):
    """Targets of 10 each; associational full, interventional short by 4, counterfactual by 9."""
    project.class_targets = {"associational": 10, "interventional": 10, "counterfactual": 10}
    project.save()
    items(project, "associational", 6, status=Status.APPROVED)
    items(project, "associational", 4, status=Status.IN_REVIEW)
    items(project, "interventional", 3, status=Status.APPROVED)
    items(project, "interventional", 3, status=Status.PENDING)
    items(project, "interventional", 5, status=Status.REJECTED)  # rejected ones do not count
    items(project, "counterfactual", 1, status=Status.NEEDS_REVISION)
    return project


def test_gaps_count_every_item_not_rejected_against_the_target(balanced):
    gaps = {gap.causal_class: gap for gap in class_gaps(project=balanced)}
    assert [(g.have, g.gold, g.needed) for g in gaps.values()] == [(10, 6, 0), (6, 3, 4), (1, 0, 9)]


def test_a_topic_with_its_own_targets_is_counted_within_the_topic(balanced):
    topic = Topic.objects.create(project=balanced, label="Educação", class_targets={"counterfactual": 5})
    items(balanced, "counterfactual", 2, topic=topic, status=Status.PENDING)

    gaps = {gap.causal_class: gap for gap in class_gaps(project=balanced, topic=topic)}

    assert (gaps["counterfactual"].have, gaps["counterfactual"].needed) == (2, 3)
    assert gaps["associational"].target is None and gaps["associational"].needed == 0
    other = Topic.objects.create(project=balanced, label="Pets")
    assert {g.causal_class: g.needed for g in class_gaps(project=balanced, topic=other)}[
        "counterfactual"
    ] == 7


def test_the_gap_proposal_asks_for_the_number_needed_of_each_short_class(balanced, endpoint):
    proposals = gap_proposals(project=balanced, topic=None, endpoint=endpoint, batch_size=5)

    assert [(p.causal_class, p.count, p.calls) for p in proposals] == [
        ("interventional", 4, 1),
        ("counterfactual", 9, 2),
    ]
    counterfactual = proposals[1]
    assert counterfactual.template.kind == "questions" and counterfactual.answer_endpoint is None
    assert counterfactual.tokens_out == 9 * QUESTION_OUTPUT_TOKENS
    expected = (
        counterfactual.tokens_in * Decimal("2.50") + counterfactual.tokens_out * Decimal("10.00")
    ) / 10**6
    assert counterfactual.cost == expected.quantize(Decimal("0.0001")) > 0


def test_answering_in_the_same_job_adds_a_call_and_its_cost_per_question(balanced, endpoint):
    alone = estimate(count=9, batch_size=5, template=None, endpoint=endpoint)
    answered = estimate(count=9, batch_size=5, template=None, endpoint=endpoint, answer_endpoint=endpoint)
    assert answered[0] == alone[0] + 9
    assert answered[2] == alone[2] + 9 * ANSWER_OUTPUT_TOKENS
    assert answered[3] > alone[3]


def test_starting_the_reviewed_proposals_creates_one_questions_job_per_class(balanced, endpoint, curator):
    topic = Topic.objects.create(project=balanced, label="Educação", selected=True)

    jobs = gap_jobs_start(
        project=balanced,
        user=curator,
        topic=topic,
        endpoint=endpoint,
        answer_endpoint=endpoint,
        counts={"associational": 0, "interventional": 4, "counterfactual": 12},
        batch_size=5,
    )

    assert [
        (job.kind, job.params["causal_class"], job.params["count"], job.params["topic_id"]) for job in jobs
    ] == [("questions", "interventional", 4, topic.pk), ("questions", "counterfactual", 12, topic.pk)]
    assert all(job.answer_endpoint == endpoint and job.created_by == curator for job in jobs)


def test_one_bad_proposal_starts_none_of_them(balanced, endpoint, curator):
    with pytest.raises(JobInvalid) as refused:
        gap_jobs_start(
            project=balanced,
            user=curator,
            topic=None,
            endpoint=endpoint,
            counts={"interventional": 4, "counterfactual": 5000},
        )
    assert "counterfactual: count" in refused.value.errors
    assert not GenerationJob.objects.exists()
    with pytest.raises(JobInvalid):
        gap_jobs_start(
            project=balanced, user=curator, topic=None, endpoint=endpoint, counts={"interventional": 0}
        )


def test_the_balance_page_proposes_and_the_curator_starts_the_jobs(
    balanced, endpoint, client_for, curator, django_capture_on_commit_callbacks
):
    topic = Topic.objects.create(project=balanced, label="Educação", selected=True, size=3)
    client = client_for(curator)
    page = reverse("topics:balance", args=[balanced.slug])
    assert client.get(page).status_code == 200

    proposed = client.get(
        page,
        {
            "propose": "1",
            "topic": topic.pk,
            "endpoint": endpoint.pk,
            "answer_variant": "class-agnostic",
            "batch_size": 10,
        },
    )
    body = proposed.content.decode()
    assert proposed.status_code == 200 and 'id="proposals"' in body
    assert 'name="count_counterfactual" value="9"' in body and 'name="count_interventional" value="4"' in body
    assert "$" in body  # the estimated cost

    sent = []
    from generation.tasks import run_generation_job

    run_generation_job.delay = sent.append
    try:
        with django_capture_on_commit_callbacks(execute=True):
            started = client.post(
                reverse("topics:balance_start", args=[balanced.slug]),
                {
                    "topic": topic.pk,
                    "endpoint": endpoint.pk,
                    "answer_variant": "class-agnostic",
                    "batch_size": 10,
                    "count_associational": 0,
                    "count_interventional": 4,
                    "count_counterfactual": 7,
                },
            )
    finally:
        del run_generation_job.delay
    assert started.status_code == 302
    jobs = list(GenerationJob.objects.order_by("pk"))
    assert [(job.params["causal_class"], job.params["count"]) for job in jobs] == [
        ("interventional", 4),
        ("counterfactual", 7),
    ]
    assert sent == [job.pk for job in jobs]


def test_targets_are_set_for_the_project_and_for_a_selected_topic(project, client_for, curator):
    topic = Topic.objects.create(project=project, label="Educação", selected=True)
    client = client_for(curator)
    target_url = reverse("topics:balance_targets", args=[project.slug])

    client.post(
        target_url, {"target_associational": 134, "target_interventional": 134, "target_counterfactual": ""}
    )
    client.post(target_url, {"topic": topic.pk, f"topic{topic.pk}-target_counterfactual": 20})
    refused = client.post(target_url, {"target_associational": -3})

    project.refresh_from_db()
    topic.refresh_from_db()
    assert project.class_targets == {"associational": 134, "interventional": 134}
    assert topic.class_targets == {"counterfactual": 20}
    assert refused.status_code == 400


def test_the_project_page_shows_the_balance_chart_and_the_funnel(balanced, client_for, annotator):
    items(
        balanced,
        "counterfactual",
        2,
        status=Status.APPROVED,
        origin=Item.Origin.GENERATED,
        answer_by=Item.AnswerBy.MODEL,
    )

    body = (
        client_for(annotator).get(reverse("annotation:project_detail", args=[balanced.slug])).content.decode()
    )

    assert 'id="class-balance"' in body and "series-gold" in body and 'class="marker"' in body
    assert 'id="funnel"' in body and "Answered by models" in body


def test_the_funnel_separates_natural_answered_by_people_from_generated_answered_by_models(project):
    from annotation.selectors import class_funnel

    items(project, "interventional", 3, status=Status.APPROVED)  # natural, answered by a person
    items(
        project,
        "interventional",
        2,
        status=Status.APPROVED,
        origin=Item.Origin.GENERATED,
        answer_by=Item.AnswerBy.MODEL,
    )
    items(
        project,
        "interventional",
        1,
        status=Status.IN_REVIEW,
        origin=Item.Origin.GENERATED,
        answer_by=Item.AnswerBy.MODEL,
    )
    items(project, "counterfactual", 1, status=Status.PENDING, reference_answer="", answer_by="")

    rows = {row["label"]: row for row in class_funnel(project)}

    inter = rows["interventional"]
    assert (inter["gold"], inter["human_gold"], inter["human"], inter["model_gold"], inter["model"]) == (
        5,
        3,
        3,
        2,
        3,
    )
    assert rows["counterfactual"]["unanswered"] == 1
    assert (rows["total"]["gold"], rows["total"]["human_gold"], rows["total"]["model_gold"]) == (5, 3, 2)
