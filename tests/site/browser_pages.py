"""What the site-wide browser tests share: a studio with every kind of page to visit, axe-core from npm.

axe-core comes from npm into ``tests/browser_assets/node_modules`` (package.json and package-lock.json
are in the repository); when it is missing, ``axe_source`` runs ``npm ci`` there once, so a fresh clone
works. Without npm the tests skip with the reason (CAUSALQA_REQUIRE_ALL=1 makes that a failure).
"""

import shutil
import subprocess
from functools import lru_cache
from pathlib import Path

import pytest

from annotation.judging import judgment_submit
from annotation.models import Item, Membership
from annotation.queue import assignment_next
from tests.factories import ItemFactory, OptionFactory, ProjectFactory, UserFactory

ASSETS = Path(__file__).resolve().parents[1] / "browser_assets"
AXE = ASSETS / "node_modules" / "axe-core" / "axe.min.js"
DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}
LANGUAGES = {"en": "en-US", "pt-BR": "pt-BR"}


@lru_cache(maxsize=1)
def axe_source() -> str:
    if not AXE.exists():
        npm = shutil.which("npm")
        if npm is None:
            pytest.skip("npm is not installed; the accessibility checks need axe-core from npm")
        subprocess.run(
            [npm, "ci", "--no-audit", "--no-fund"], cwd=ASSETS, check=True, capture_output=True, timeout=600
        )
    return AXE.read_text()


def axe_violations(page) -> list[dict]:
    """axe-core's violations of the page as it stands (every rule axe runs by default)."""
    # Evaluated through the DevTools protocol: the page's Content-Security-Policy (scripts from its own files
    # only) refuses an injected <script> tag, rightly.
    page.evaluate(axe_source())
    result = page.evaluate("async () => (await axe.run(document, {resultTypes: ['violations']})).violations")
    return [
        {
            "id": v["id"],
            "impact": v["impact"],
            "help": v["help"],
            "nodes": [node["target"] for node in v["nodes"]][:5],
        }
        for v in result
    ]


def horizontal_overflow(page) -> tuple[int, int]:
    """The page's scroll width and the window's width (the page fits when the first is not larger)."""
    return page.evaluate("() => [document.documentElement.scrollWidth, window.innerWidth]")


def build_studio() -> dict:
    """An owner, a curator and two annotators in a Portuguese project at every stage: items waiting for an
    answer, in review, judged (a complete round), approved; guidelines and targets."""
    project = ProjectFactory(
        slug="estudio",
        name="Perguntas causais sobre saúde pública",
        overlap=1,
        guidelines="# Diretrizes\n\n- **Aceitar** quando todas as notas forem ≥ 4.\n"
        "- Explique o mecanismo causal.",
        class_targets={"associational": 134, "interventional": 134, "counterfactual": 134},
        label_names={"associational": {"en": "associational", "pt-BR": "associativa"}},
    )
    people = {}
    for username, role in (
        ("olga", "owner"),
        ("carla", "curator"),
        ("ana", "annotator"),
        ("bruno", "annotator"),
    ):
        people[username] = UserFactory(username=username, email=f"{username}@exemplo.org")
        Membership.objects.create(
            user=people[username],
            project=project,
            role=role,
            expertise=["saúde"] if username == "ana" else [],
        )
    judged = ItemFactory(
        project=project,
        question="Por que a vacinação em massa reduz os casos de sarampo?",
        reference_answer="Porque diminui o número de pessoas suscetíveis e interrompe a transmissão.",
        context="Boletim epidemiológico de 2023 com a cobertura vacinal por estado.",
        metadata={"stage": "verified"},
    )
    OptionFactory(
        item=judged, text="Interrompe a transmissão", role="correct", rationale="Mecanismo", position=0
    )
    OptionFactory(
        item=judged, text="O sarampo aumenta a vacinação", role="reversal", rationale="Inversão", position=1
    )
    assignment = assignment_next(project=project, annotator=people["ana"])
    judgment_submit(
        assignment=assignment,
        ratings={key: 4 for key in project.criterion_keys},
        vote="accept",
        causal_class="associational",
        comment="Boa resposta, mas cite a fonte.",
    )
    waiting = ItemFactory(
        project=project,
        question="Se o saneamento fosse universal, a diarreia infantil cairia?",
        causal_class="counterfactual",
    )
    ItemFactory(
        project=project,
        status=Item.Status.PENDING,
        round=0,
        reference_answer="",
        answer_by=Item.AnswerBy.NOBODY,
        question="Por que a dengue volta todos os verões no Sudeste?",
    )
    ItemFactory(
        project=project,
        status=Item.Status.APPROVED,
        question="O fumo causa câncer de pulmão?",
        causal_class="interventional",
    )
    review = assignment_next(project=project, annotator=people["bruno"])
    answer = assignment_next(project=project, annotator=people["ana"], kind="answer")
    return {
        "project": project,
        "people": people,
        "judged": judged,
        "waiting": waiting,
        "review": review,
        "answer": answer,
    }


def build_later_pages(studio: dict) -> dict:
    """What exists only after work has been done: a ready release (with its card), a finished benchmark run and
    an import that failed on a bad row; added to ``studio``."""
    from annotation.models import ImportBatch
    from evaluation.models import EvalRun
    from evaluation.services import release_cut

    project = studio["project"]
    for n in range(6):
        ItemFactory(
            project=project,
            status=Item.Status.APPROVED,
            causal_class=("associational", "interventional", "counterfactual")[n % 3],
            question=f"Por que a cobertura vacinal muda a incidência {n}?",
        )
    studio["release"] = release_cut(project=project, seed=3, split_ratios=[0.5, 0.0, 0.5])
    studio["run"] = EvalRun.objects.create(
        project=project, release=studio["release"], status=EvalRun.Status.SUCCEEDED, conditions=["zero-shot"]
    )
    studio["failed_import"] = ImportBatch.objects.create(
        project=project,
        filename="perguntas.csv",
        status=ImportBatch.Status.FAILED,
        errors=[{"line": 3, "field": "question", "message": "a pergunta está vazia"}],
    )
    return studio


def pages_for(studio: dict) -> dict[str, list[tuple[str, str]]]:
    """(name, path) of the pages each person visits."""
    slug, judged = studio["project"].slug, studio["judged"]
    owner = [
        ("home", "/"),
        ("project", f"/p/{slug}/"),
        ("items", f"/p/{slug}/items/"),
        ("items-filtered", f"/p/{slug}/items/?status=in_review&q=sarampo&sort=-updated_at"),
        ("review-queue", f"/p/{slug}/review/"),
        ("item-review", f"/p/{slug}/items/{judged.pk}/"),
        ("item-history", f"/p/{slug}/items/{judged.pk}/history/"),
        ("dashboard", f"/p/{slug}/dashboard/"),
        ("members", f"/p/{slug}/members/"),
        ("settings", f"/p/{slug}/settings/"),
        ("history", f"/p/{slug}/history/"),
        ("preferences", "/account/"),
        ("agreement", f"/evaluation/p/{slug}/agreement/"),
        ("revisions", f"/p/{slug}/revisions/"),
        ("guidelines", f"/p/{slug}/guidelines/"),
        ("class-balance", f"/generation/p/{slug}/balance/"),
        ("designs-help", "/help/designs/"),
        ("my-api-token", "/evaluation/my-api-token/"),
        ("api-docs", "/api/docs/"),
    ]
    if "release" in studio:
        owner += [
            ("release", f"/evaluation/p/{slug}/releases/{studio['release'].version}/"),
            ("runs", f"/evaluation/p/{slug}/runs/"),
            ("run-report", f"/evaluation/p/{slug}/runs/{studio['run'].pk}/"),
            ("import-failed", f"/p/{slug}/imports/{studio['failed_import'].pk}/"),
            ("api-access", f"/evaluation/p/{slug}/api-tokens/"),
        ]
    if "answered_run" in studio:
        owner += [
            ("run-report-answers", f"/evaluation/p/{slug}/runs/{studio['answered_run'].pk}/"),
            ("causalbench-project", f"/p/{studio['causalbench'].slug}/"),
            ("causalitycheck-project", f"/p/{studio['causalitycheck'].slug}/"),
        ]
    reviewer = [
        ("queue", f"/p/{slug}/queue/"),
        ("item-page", f"/p/{slug}/assignments/{studio['review'].pk}/"),
    ]
    writer = [
        ("answer-page", f"/p/{slug}/assignments/{studio['answer'].pk}/"),
        ("my-judgments", f"/p/{slug}/items/"),
    ]
    return {"olga": owner, "bruno": reviewer, "ana": writer}


def build_report_and_design_pages(studio: dict) -> dict:
    """What the language walk reads beyond ``build_later_pages``: a run with real answers (two models' responses
    under both open conditions, a judge's scores and rankings, imported as a published evaluation is), and a
    CausalBench and a CausalityCheck project with their example items, owned by the studio's owner."""
    import csv
    import io

    from annotation.designs import design_for
    from annotation.projects import project_create
    from evaluation.models import ReleaseItem
    from evaluation.runs.imported import ResultFile, run_import_results

    def table(header, rows) -> bytes:
        buffer = io.StringIO()
        csv.writer(buffer).writerows([header, *rows])
        return buffer.getvalue().encode()

    release = studio["release"]
    ids = [
        record.data["id"]
        for record in ReleaseItem.objects.filter(release=release, split=ReleaseItem.Split.TEST).order_by("pk")
    ]
    models, conditions = ("gpt-4o", "gemma-3-27b"), ("class-agnostic", "class-informed")
    responses = [
        (item, model, condition, f"Resposta de {model} ao item {item}: a causa age sobre o efeito.")
        for item in ids
        for model in models
        for condition in conditions
    ]
    scores = [
        (item, f"{model} · {condition}", 2 + (n + k) % 4, "Segue a pergunta.", "gpt-5-mini")
        for n, item in enumerate(ids)
        for k, (model, condition) in enumerate((m, c) for m in models for c in conditions)
    ]
    scores += [(item, "referência", 5, "Resposta de referência.", "gpt-5-mini") for item in ids]
    rankings = [
        (
            item,
            model,
            "reference > class-informed > class-agnostic",
            "class-agnostic, reference, class-informed",
            "gpt-5-mini",
        )
        for item in ids
        for model in models
    ]
    studio["answered_run"] = run_import_results(
        project=studio["project"],
        release=release,
        name="Artigo (respostas publicadas)",
        files=[
            ResultFile("respostas.csv", table(("id", "modelo", "condicao", "resposta"), responses)),
            ResultFile("notas.csv", table(("id", "avaliado", "aderência", "justificativa", "juiz"), scores)),
            ResultFile("rankings.csv", table(("id", "modelo", "ranking", "shown", "juiz"), rankings)),
        ],
        enqueue=False,
    )
    owner = studio["people"]["olga"]
    for design in ("causalbench", "causalitycheck"):
        project = project_create(
            name=f"Demo {design}", slug=f"demo-{design}", design=design, created_by=owner
        )
        project.language = "pt-BR"
        project.save(update_fields=["language"])
        design_for(project).load_example(project, {})
        studio[design] = project
    return studio
