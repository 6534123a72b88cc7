"""Blind review stays blind: what a reviewer must not read before their own judgment (the closed round's votes
and comments, the curator's note, the answers a judge compares) never reaches an annotator."""

import pytest
from django.urls import reverse

from generation.models import GenerationJob, LLMCall, PromptTemplate
from tests.factories import ItemFactory

pytestmark = pytest.mark.django_db

FEEDBACK = "Revisor 2: a resposta confunde correlação com causa. Nota da curadora: reescrever."


def call_of_kind(project, endpoint, kind, item):
    template = PromptTemplate.objects.filter(kind=kind).first() or PromptTemplate.objects.first()
    job = GenerationJob.objects.create(project=project, kind=kind, endpoint=endpoint, template=template,
                                       params={"feedback": {str(item.pk): FEEDBACK}})
    return LLMCall.objects.create(
        job=job, item=item, purpose=kind, endpoint=endpoint, template=template,
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
