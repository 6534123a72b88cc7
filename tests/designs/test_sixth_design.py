"""A sixth design, one package and one line in ``INSTALLED_APPS``, works end to end through the shared doors.

"Provérbios" (``tests/designs/proverbs/``) is a small design of our own: each item is a Portuguese proverb read as
a causal claim, annotators rate only its plausibility on a 1–3 scale and label it causal or not, and one job kind
asks a model to explain the causal reading of each proverb in the tone the job asks for. The package brings its
design, its job kind with its own option, its prompt template, its page and its Portuguese strings; the test only
adds it to ``INSTALLED_APPS`` (and rebuilds the URLconf, as a restart would). Nothing in annotation, generation or
evaluation names it.
"""

import importlib
import sys
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import call_command
from django.urls import clear_url_caches, reverse
from django.utils import translation

from annotation.designs import base as design_registry
from annotation.designs import design_for, designs
from annotation.models import Item, Judgment
from annotation.projects import project_create
from annotation.queue import assignment_next
from generation import kinds as kind_registry
from generation.models import GenerationJob, PromptTemplate
from generation.prompts import template_dirs
from generation.services import job_create, prompt_templates_load
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

APP = "tests.designs.proverbs"
EXPLAIN = "proverb_explain"


def _forget_the_app_modules():
    for name in [name for name in sys.modules if name == APP or name.startswith(f"{APP}.")]:
        del sys.modules[name]


def _rebuild_urls():
    import causalqa_site.urls
    import designs.urls

    importlib.reload(designs.urls)
    importlib.reload(causalqa_site.urls)
    clear_url_caches()


@pytest.fixture
def sixth_design(monkeypatch, settings, db):
    """The app installed as a line in ``INSTALLED_APPS`` would install it, and removed afterwards."""
    for registry, name in (
        (design_registry, "_REGISTRY"),
        (kind_registry, "_KINDS"),
        (kind_registry, "_CALL_KINDS"),
        (kind_registry, "_PAGES"),
    ):
        monkeypatch.setattr(registry, name, {**getattr(registry, name)})
    _forget_the_app_modules()
    settings.INSTALLED_APPS = [*settings.INSTALLED_APPS, APP]
    _rebuild_urls()
    prompt_templates_load()
    yield design_for("proverbs")
    monkeypatch.undo()  # the registries as they were; ``settings`` takes the app out of INSTALLED_APPS
    _forget_the_app_modules()
    _rebuild_urls()


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

    jobs = f"/api/v1/projects/{proverbs.slug}/jobs/"
    refused = client_for(curator).post(
        jobs,
        {"kind": EXPLAIN, "endpoint": endpoint.pk, "item_ids": [first.pk], "tone": "shouted"},
        content_type="application/json",
    )
    assert refused.status_code == 400 and "tone" in refused.json(), refused.content
    api = client_for(curator).post(
        jobs,
        {"kind": EXPLAIN, "endpoint": endpoint.pk, "item_ids": [first.pk], "tone": "poetic"},
        content_type="application/json",
    )
    assert api.status_code == 201, api.content
    run_now(GenerationJob.objects.get(pk=api.json()["id"]))
    first.refresh_from_db()
    assert (first.status, first.round, first.answer_by) == (Item.Status.IN_REVIEW, 1, Item.AnswerBy.MODEL)
    prompt = fake_llm.completions[0].prompt
    assert "Explique, em tom poetic, por que semear vento leva a colher tempestade" in prompt

    call_command(
        "generate",
        "proverb-explain",
        "--project",
        proverbs.slug,
        "--model",
        "fake",
        "--tone",
        "plain",
        "--here",
    )
    assert not proverbs.items.filter(reference_answer="").exists()  # the rest, by default: every one waiting
    assert "em tom plain" in fake_llm.completions[-1].prompt

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


def test_its_job_option_is_on_the_generation_page_and_checked_there_in_the_reader_s_language(
    proverbs, endpoint, curator, client_for
):
    """The page's card is the shared form with a field built from the kind's options, the same options the API
    and the command take: offered with the option's own label and choices, and a value outside them refused."""
    from annotation.models import Membership

    Membership.objects.create(user=curator, project=proverbs, role=Membership.Role.CURATOR)
    client = client_for(curator)
    page = client.get(reverse("generation:project", args=[proverbs.slug]), HTTP_ACCEPT_LANGUAGE="pt-br")
    html = page.content.decode()
    assert page.status_code == 200, html[:500]
    assert "Explicar um provérbio" in html, "the card names the kind in Portuguese"
    assert f'name="{EXPLAIN}-tone"' in html, "the kind's option is a field of the card"
    assert "Tom" in html and "Como explicar." in html, "the option's label and help are in Portuguese"
    assert '<option value="poetic"' in html, "the option's choices are offered"

    start = reverse("generation:job_start", args=[proverbs.slug, EXPLAIN])
    refused = client.post(
        start,
        {f"{EXPLAIN}-endpoint": endpoint.pk, f"{EXPLAIN}-tone": "shouted"},
        HTTP_ACCEPT_LANGUAGE="pt-br",
    )
    assert refused.status_code == 400, refused.content.decode()[:500]
    assert "Faça uma escolha válida. shouted não é uma das escolhas disponíveis." in refused.content.decode()
    assert not GenerationJob.objects.filter(project=proverbs).exists()

    started = client.post(start, {f"{EXPLAIN}-endpoint": endpoint.pk, f"{EXPLAIN}-tone": "poetic"})
    assert started.status_code == 302, started.content.decode()[:500]
    job = GenerationJob.objects.get(project=proverbs)
    assert (job.kind, job.params["tone"]) == (EXPLAIN, "poetic")


def test_its_job_kind_is_refused_in_other_designs_and_other_designs_kinds_in_it(proverbs, project, endpoint):
    from generation.services import JobInvalid

    with pytest.raises(JobInvalid, match="for proverb projects"):
        job_create(project=project, kind=EXPLAIN, endpoint=endpoint, enqueue=False)
    with pytest.raises(JobInvalid, match="for METER projects"):
        job_create(project=proverbs, kind="decontamination", endpoint=endpoint, enqueue=False)


def test_its_page_prompt_and_portuguese_come_from_its_own_package(proverbs, curator, client_for):
    from annotation.models import Membership

    Membership.objects.create(user=curator, project=proverbs, role=Membership.Role.CURATOR)
    address = reverse("designs:proverbs", args=[proverbs.slug])
    portuguese = client_for(curator).get(address, HTTP_ACCEPT_LANGUAGE="pt-br")
    assert portuguese.status_code == 200
    assert "Provérbios lidos como afirmações causais." in portuguese.content.decode()
    assert "Quem semeia vento colhe tempestade." in portuguese.content.decode()
    english = client_for(curator).get(address, HTTP_ACCEPT_LANGUAGE="en")
    assert "Proverbs read as causal claims." in english.content.decode()
    with translation.override("pt-br"):
        assert str(kind_registry.job_kind(EXPLAIN).label) == "Explicar um provérbio"

    assert any(folder.parent.name == "proverbs" for folder in template_dirs())
    template = PromptTemplate.objects.get(kind=EXPLAIN, name="default", language="pt-BR")
    assert "em tom {{ tone }}" in template.user


def test_no_shared_file_names_the_sixth_design():
    """What makes it work is in its package: no app, shared template, catalogue or setting names it."""
    root = Path(settings.BASE_DIR)
    shared = [
        root / name
        for name in ("annotation", "topics", "generation", "evaluation", "designs", "causalqa_site")
    ]
    shared += [root / "templates", root / "locale", root / "pyproject.toml", root / "Makefile"]
    named = []
    for place in shared:
        for path in [place] if place.is_file() else sorted(place.rglob("*")):
            readable = path.is_file() and path.suffix in {
                ".py",
                ".html",
                ".po",
                ".yaml",
                ".toml",
                ".txt",
                ".md",
                "",
            }
            if readable and "proverb" in path.read_text(encoding="utf-8", errors="ignore").lower():
                named.append(str(path.relative_to(root)))
    assert named == []
