"""No model call shows an annotator an answer a blind step compares: every call kind of every design is opened
as an annotator, through every door that shows a call or an item (page, htmx part, API), and the answer the
design hides from annotators appears in none of them."""

import pytest
from django.urls import reverse

from annotation.designs import design_for, designs
from annotation.models import Item, Membership, Project
from generation.kinds import call_kinds
from generation.models import GenerationJob, LLMCall, PromptTemplate
from generation.services.work import call_readers

pytestmark = pytest.mark.django_db

ANSWER = "resposta-secreta-7f3a"


def every_call_kind() -> list[str]:
    return sorted(kind.key for kind in call_kinds() if kind.work is not None)


def project_of(design_key, owner, curator, annotator) -> Project:
    defaults = design_for(design_key).project_defaults()
    project = Project.objects.create(
        name=design_key, slug=f"blind-{design_key}", design=design_key, **defaults
    )
    for user, role in ((owner, "owner"), (curator, "curator"), (annotator, "annotator")):
        Membership.objects.create(project=project, user=user, role=role)
    return project


def call_carrying_the_answer(project, endpoint, kind, item) -> LLMCall:
    template = PromptTemplate.objects.filter(kind=kind).first() or PromptTemplate.objects.first()
    job = GenerationJob.objects.create(project=project, kind=kind, endpoint=endpoint, template=template)
    return LLMCall.objects.create(
        job=job,
        item=item,
        purpose=kind,
        endpoint=endpoint,
        template=template,
        status=LLMCall.Status.SUCCEEDED,
        request={"messages": [{"role": "user", "content": f"A resposta: {ANSWER}"}]},
        raw_response=f'{{"answer": "{ANSWER}"}}',
        parsed={"answer": ANSWER, "questions": [{"answer": ANSWER}]},
    )


def doors(project, call, item, *, blind) -> list[tuple[str, dict]]:
    """Where a call shows; where the item shows too when its answer is blind (else the item shows it anyway)."""
    call_page = reverse("generation:call_detail", args=[call.pk])
    calls = [
        (call_page, {}),
        (call_page, {"HTTP_HX_REQUEST": "true"}),
        (f"/api/v1/projects/{project.slug}/jobs/{call.job_id}/calls/", {}),
    ]
    if not blind:
        return calls
    return calls + [
        (reverse("annotation:item_part", args=[project.slug, item.pk, "answer"]), {}),
        (reverse("annotation:items", args=[project.slug]), {}),
        (f"/api/v1/projects/{project.slug}/items/", {}),
        (f"/api/v1/projects/{project.slug}/items/{item.pk}/", {}),
        (reverse("annotation:item_history", args=[project.slug, item.pk]), {}),
    ]


@pytest.mark.parametrize("design_key", [design.key for design in designs()])
def test_no_call_kind_shows_an_annotator_an_answer_a_blind_step_compares(
    design_key, owner, curator, annotators, client_for, endpoint, prompt_templates
):
    annotator = annotators[0]
    project = project_of(design_key, owner, curator, annotator)
    item = Item.objects.create(
        project=project,
        question="A chuva molha a rua?",
        reference_answer=ANSWER,
        status=Item.Status.IN_REVIEW,
        round=1,
        text_key=f"{design_key}-blind",
    )
    blind = "reference_answer" in design_for(project).hidden_from_annotators(item)
    client = client_for(annotator)
    checked = 0
    for kind in every_call_kind():
        call = call_carrying_the_answer(project, endpoint, kind, item)
        if not blind and call_readers(kind, project) == Membership.Role.ANNOTATOR:
            continue  # nothing of this call is blind in this design
        for url, headers in doors(project, call, item, blind=blind):
            response = client.get(url, **headers)
            assert response.status_code < 500, (kind, url, response.status_code)
            assert ANSWER not in response.content.decode(), f"{design_key}: {kind}'s answer shows at {url}"
            checked += 1
    assert checked, "every design has calls an annotator may not read"


def test_a_causalbench_answer_call_is_for_curators_while_the_same_kind_stays_open_elsewhere(
    owner, curator, annotators, client_for, endpoint, prompt_templates, project
):
    causalbench = project_of("causalbench", owner, curator, annotators[0])
    for where in (causalbench, project):
        item = Item.objects.create(
            project=where, question="Q?", reference_answer=ANSWER, status=Item.Status.IN_REVIEW, round=1
        )
        call = call_carrying_the_answer(where, endpoint, "answer", item)
        response = client_for(annotators[0]).get(reverse("generation:call_detail", args=[call.pk]))
        assert response.status_code == (403 if where == causalbench else 200), where.design
        assert client_for(curator).get(reverse("generation:call_detail", args=[call.pk])).status_code == 200
