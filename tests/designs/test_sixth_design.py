"""A sixth design, registered here and nowhere else, works end to end through the shared doors.

"Provérbios" is a small design of our own: each item is a Portuguese proverb read as a causal claim
(cause → effect, kept in the item's metadata), annotators rate only its plausibility on a 1–3 scale and label it
causal or not, and one job kind asks a model to explain the causal reading of each proverb. Nothing in
annotation, generation or evaluation is touched to make it work: it registers into the design registry and the
job-kind registry, as a design app does when it is ready.
"""

import pytest
from django.core.management import call_command
from django.urls import reverse

from annotation.designs import base as design_registry
from annotation.designs import design_for, designs
from annotation.designs.base import ProjectDesign, Stage
from annotation.models import Item, Judgment
from annotation.projects import project_create
from annotation.queue import assignment_next
from annotation.services import item_create, item_revise, item_start_round
from generation import kinds as kind_registry
from generation.kinds import JobKind, job_kind_register
from generation.models import GenerationJob
from generation.services import job_create, prompt_template_add_version
from generation.services.jobs import checked_items
from generation.services.work import NotApplied, Work, author_of
from tests.fake_llm import Reply
from tests.generation.conftest import (  # noqa: F401 - fixtures
    api_key,
    endpoint,
    fake_llm,
    fresh_limiters,
    prompt_templates,
    quick_generation_settings,
    run_now,
)

pytestmark = pytest.mark.django_db

PROVERBS = [
    ("Quem semeia vento colhe tempestade.", "semear vento", "colher tempestade"),
    ("Água mole em pedra dura tanto bate até que fura.", "a água bater na pedra", "a pedra furar"),
    ("Cão que ladra não morde.", "o cão ladrar", "o cão não morder"),
]
EXPLAIN = "proverb_explain"


class ProverbDesign(ProjectDesign):
    key = "proverbs"
    name = "Provérbios"
    summary = "Provérbios lidos como afirmações causais."
    answer_format = "open"

    def stages(self):
        return [Stage("reading", "Reading")]

    def project_defaults(self):
        return {
            "answer_format": "open",
            "label_set": ["causal", "not-causal"],
            "overlap": 1,
            "criteria": [{"key": "plausibility", "label": "Plausibility", "min": 1, "max": 3}],
        }

    def load_example(self, project, users):
        for number, (proverb, cause, effect) in enumerate(PROVERBS, start=1):
            item_create(
                project=project,
                question=proverb,
                external_id=f"prov-{number}",
                metadata={"stage": "reading", "cause": cause, "effect": effect},
            )
        return {"items": len(PROVERBS)}

    def item_warnings(self, item):
        return [] if item.metadata.get("cause") else ["A proverb needs its cause."]

    def judgment_criteria(self, item):
        return [{"key": "plausibility", "label": "Plausibility", "min": 1, "max": 3}]

    def judgment_labels(self, item):
        return ["causal", "not-causal"]


class ExplainWork(Work):
    purpose = "explain"

    def variables(self, call):
        return {
            "proverb": call.item.question,
            "cause": call.item.metadata["cause"],
            "effect": call.item.metadata["effect"],
            "language": self.project.language,
        }

    def apply(self, call, parsed):
        item = Item.objects.get(pk=call.item_id)
        if item.status != Item.Status.PENDING:
            raise NotApplied(f"item {item.pk} is not waiting")
        item = item_revise(
            item=item,
            changes={"reference_answer": parsed["explanation"]},
            author=author_of(call),
            kind="model",
        )
        item_start_round(item=item)
        return []


def explain_params(project, errors, options):
    item_ids = options["item_ids"]
    if item_ids is None:
        item_ids = list(project.items.filter(reference_answer="").order_by("pk").values_list("pk", flat=True))
    return {
        "item_ids": checked_items(project, errors, item_ids, allowed=(Item.Status.PENDING,), required=True)
    }


def proverbs_only(project):
    return None if project.design == "proverbs" else f"{EXPLAIN} jobs are for proverb projects"


@pytest.fixture
def sixth_design(monkeypatch, db):
    """Registered as a design app would be, and unregistered afterwards."""
    monkeypatch.setattr(design_registry, "_REGISTRY", {**design_registry._REGISTRY})
    monkeypatch.setattr(kind_registry, "_KINDS", {**kind_registry._KINDS})
    design_registry.register(ProverbDesign)
    job_kind_register(
        JobKind(
            key=EXPLAIN,
            label="Explain a proverb",
            work=ExplainWork,
            params=explain_params,
            runs_on=proverbs_only,
            variables=frozenset({"proverb", "cause", "effect", "language"}),
        )
    )
    prompt_template_add_version(
        kind=EXPLAIN,
        name="default",
        language="pt-BR",
        system="Você explica provérbios.",
        user="Explique por que {{ cause }} leva a {{ effect }} em: {{ proverb }}",
        output_schema={
            "type": "object",
            "properties": {"explanation": {"type": "string"}},
            "required": ["explanation"],
            "additionalProperties": False,
        },
    )
    return design_for("proverbs")


@pytest.fixture
def proverbs(sixth_design, owner, annotators):
    from annotation.models import Membership

    project = project_create(name="Provérbios", slug="proverbios", design="proverbs", created_by=owner)
    for annotator in annotators:
        Membership.objects.create(user=annotator, project=project, role=Membership.Role.ANNOTATOR)
    sixth_design.load_example(project, {})
    return project


def test_the_sixth_design_is_offered_and_creates_projects_with_its_own_defaults(sixth_design, proverbs):
    assert [design.key for design in designs()][-1] == "proverbs"
    assert proverbs.criterion_keys == ["plausibility"] and proverbs.label_set == ["causal", "not-causal"]
    assert proverbs.items.count() == 3 and sixth_design.stage_counts(proverbs) == {"reading": 3}


@pytest.mark.django_db(
    transaction=True
)  # the command's --here runs the job in a thread with its own connection
def test_its_job_kind_runs_from_the_api_and_the_command_and_its_form_is_what_annotators_fill(
    proverbs, endpoint, fake_llm, curator, annotators, client_for, owner
):
    from annotation.models import Membership

    Membership.objects.create(user=curator, project=proverbs, role=Membership.Role.CURATOR)
    fake_llm.responder = lambda received: Reply.json(
        {"explanation": "Quem provoca o mal sofre as consequências."}
    )
    first = proverbs.items.order_by("pk").first()

    api = client_for(curator).post(
        f"/api/v1/projects/{proverbs.slug}/jobs/",
        {"kind": EXPLAIN, "endpoint": endpoint.pk, "item_ids": [first.pk]},
        content_type="application/json",
    )
    assert api.status_code == 201, api.content
    run_now(GenerationJob.objects.get(pk=api.json()["id"]))
    first.refresh_from_db()
    assert (first.status, first.round, first.answer_by) == (Item.Status.IN_REVIEW, 1, Item.AnswerBy.MODEL)
    assert "Explique por que semear vento leva a colher tempestade" in fake_llm.completions[0].prompt

    call_command("generate", "proverb-explain", "--project", proverbs.slug, "--model", "fake", "--here")
    assert not proverbs.items.filter(reference_answer="").exists()  # the rest, by default: every one waiting

    assignment = assignment_next(project=proverbs, annotator=annotators[0])
    page = client_for(annotators[0]).get(
        reverse("annotation:assignment", args=[proverbs.slug, assignment.pk])
    )
    html = page.content.decode()
    assert page.status_code == 200 and 'name="rating_plausibility"' in html and "rating_fluency" not in html
    response = client_for(annotators[0]).post(
        reverse("annotation:assignment_judge", args=[proverbs.slug, assignment.pk]),
        {"rating_plausibility": "3", "vote": "accept", "causal_class": "causal", "comment": ""},
    )
    assert response.status_code in (200, 302), response.content.decode()[:500]
    judgment = Judgment.objects.get(assignment=assignment)
    assert judgment.ratings == {"plausibility": 3} and judgment.causal_class == "causal"
    assert Judgment.objects.filter(item__project=proverbs).count() == 1


def test_its_job_kind_is_refused_in_other_designs_and_other_designs_kinds_in_it(proverbs, project, endpoint):
    from generation.services import JobInvalid

    with pytest.raises(JobInvalid, match="for proverb projects"):
        job_create(project=project, kind=EXPLAIN, endpoint=endpoint, enqueue=False)
    with pytest.raises(JobInvalid, match="for METER projects"):
        job_create(project=proverbs, kind="decontamination", endpoint=endpoint, enqueue=False)
