"""Blind review stays blind: what a reviewer must not read before their own judgment (the closed round's votes
and comments, the curator's note, the answers a judge compares) never reaches an annotator."""

import pytest
from django.urls import reverse

from annotation.models import Item
from generation.models import GenerationJob, LLMCall, PromptTemplate
from tests.factories import ItemFactory

pytestmark = pytest.mark.django_db

FEEDBACK = "Revisor 2: a resposta confunde correlação com causa. Nota da curadora: reescrever."


def call_of_kind(project, endpoint, kind, item):
    template = PromptTemplate.objects.filter(kind=kind).first() or PromptTemplate.objects.first()
    job = GenerationJob.objects.create(
        project=project,
        kind=kind,
        endpoint=endpoint,
        template=template,
        params={"feedback": {str(item.pk): FEEDBACK}},
    )
    return LLMCall.objects.create(
        job=job,
        item=item,
        purpose=kind,
        endpoint=endpoint,
        template=template,
        request={"messages": [{"role": "user", "content": f"Feedback: {FEEDBACK}"}]},
    )


@pytest.mark.parametrize("kind", ["revision", "judge_score", "judge_ranking"])
def test_revision_and_judge_call_pages_are_for_curators_and_owners(
    project, client_for, annotator, curator, owner, endpoint, kind
):
    call = call_of_kind(project, endpoint, kind, ItemFactory(project=project))
    url = reverse("generation:call_detail", args=[call.pk])
    response = client_for(annotator).get(url)
    assert response.status_code == 403
    assert FEEDBACK not in response.content.decode()
    assert FEEDBACK in client_for(curator).get(url).content.decode()
    assert client_for(owner).get(url).status_code == 200


def test_an_answer_call_page_stays_open_to_annotators(project, client_for, annotator, endpoint):
    call = call_of_kind(project, endpoint, "answer", ItemFactory(project=project))
    assert client_for(annotator).get(reverse("generation:call_detail", args=[call.pk])).status_code == 200


# --- CausalBench: the second answer is blind and bound to what the check queue handed out -------------------


def causalbench_scenario(owner, curator, annotators):
    from designs.causalbench.design import scenario_add
    from tests.designs.test_causalbench import causalbench_project, four

    project = causalbench_project(owner, curator, annotators)
    group = scenario_add(
        project=project, domain="text", context="Chove; a rua molha.", questions=four(), external_id="cb-1"
    )
    return project, list(group.items.order_by("pk"))


def test_annotators_read_no_first_answer_before_their_check(owner, curator, annotators, client_for):
    project, items = causalbench_scenario(owner, curator, annotators)
    item = items[0]
    annotator = client_for(annotators[0])
    part = reverse("annotation:item_part", args=[project.slug, item.pk, "answer"])
    assert annotator.get(part).status_code == 404
    assert annotator.get(part, {"edit": "1"}).status_code == 403  # not handed to them
    annotator.post(reverse("designs:causalbench_check", args=[project.slug]), {"take": "1"})
    assert annotator.get(part, {"edit": "1"}).status_code == 404  # handed to them: still blind
    listed = annotator.get(f"/api/v1/projects/{project.slug}/items/").json()["results"]
    assert {row["reference_answer"] for row in listed} == {""}
    assert all("explanation" not in row["metadata"] and "check" not in row["metadata"] for row in listed)
    as_curator = client_for(curator).get(f"/api/v1/projects/{project.slug}/items/").json()["results"]
    assert {row["reference_answer"] for row in as_curator} == {"yes", "no"}
    assert client_for(curator).get(part).status_code == 200


def test_a_check_is_accepted_only_for_the_question_the_queue_handed_out(
    owner, curator, annotators, client_for
):
    project, items = causalbench_scenario(owner, curator, annotators)
    url = reverse("designs:causalbench_check", args=[project.slug])
    client = client_for(annotators[0])
    for item in items:  # the exploit: answering chosen ids, each agreeing with the first answer
        client.post(url, {"item": item.pk, "answer": item.reference_answer})
    assert not Item.objects.filter(pk__in=[i.pk for i in items], status=Item.Status.APPROVED).exists()
    assert all("check" not in Item.objects.get(pk=i.pk).metadata for i in items)

    client.post(url, {"take": "1"})
    handed = client.get(url).context["item"]
    other = next(i for i in items if i.pk != handed.pk)
    client.post(url, {"item": other.pk, "answer": other.reference_answer})
    assert "check" not in Item.objects.get(pk=other.pk).metadata
    client.post(url, {"item": handed.pk, "answer": handed.reference_answer})
    assert Item.objects.get(pk=handed.pk).status == Item.Status.APPROVED


def test_two_annotators_are_never_handed_the_same_question(owner, curator, annotators, client_for):
    project, _items = causalbench_scenario(owner, curator, annotators)
    url = reverse("designs:causalbench_check", args=[project.slug])
    handed = []
    for annotator in annotators[:2]:
        client = client_for(annotator)
        client.post(url, {"take": "1"})
        handed.append(client.get(url).context["item"].pk)
    assert handed[0] != handed[1]


def test_the_review_queue_hands_out_no_question_whose_blind_check_is_pending(
    owner, curator, annotators, client_for
):
    from annotation import queue

    project, items = causalbench_scenario(owner, curator, annotators)
    for annotator in annotators:
        assert queue.assignment_next(project=project, annotator=annotator) is None
        assert queue.waiting_counts(annotator, [project])[project.pk][queue.REVIEW] == 0
    page = client_for(annotators[0]).post(reverse("annotation:queue_next", args=[project.slug]), follow=True)
    assert "Porque" not in page.content.decode()  # no explanation of a first answer either
    Item.objects.filter(pk=items[0].pk).update(metadata={**items[0].metadata, "check": {"answer": "yes"}})
    handed = queue.assignment_next(project=project, annotator=annotators[0])
    assert handed is not None and handed.item_id == items[0].pk  # once checked, it is reviewed as usual
