"""The CausalBench design: scenarios of four perspectives, generation in two modes, the answer check,
adjudication, the check report, release and export with CausalBench's columns.

Yes/no balance of the example (designs/causalbench/data/causalbench.json), counted by hand:

    perspective                     yes  no      domain  yes  no
    cause_to_effect                  4    2      text     4    4
    effect_to_cause                  2    4      math     4    4
    cause_to_effect_intervention     5    1      code     4    4
    effect_to_cause_intervention     1    5
"""

import json
import re
from pathlib import Path

import pytest
from django.template.loader import render_to_string
from django.urls import reverse

from annotation.designs import design_for
from annotation.models import Assignment, CurationDecision, Item, ItemGroup, Membership, Project, Revision
from designs.causalbench.checks import (
    adjudication_queue,
    check_adjudicate,
    check_record,
    check_report,
    questions_to_check,
)
from designs.causalbench.design import (
    PERSPECTIVES,
    ScenarioInvalid,
    example_scenarios_load,
    read_example,
    scenario_add,
)
from evaluation.agreement import RatingTable, cohen_kappa
from evaluation.services import release_cut
from generation.models import LLMCall, ModelEndpoint
from generation.services import JobInvalid, job_create
from tests.fake_llm import Reply
from tests.generation.conftest import (  # noqa: F401 - fixtures
    KEY_ENV,
    api_key,
    endpoint,
    fake_llm,
    fresh_limiters,
    prompt_templates,
    quick_generation_settings,
    run_now,
)

pytestmark = pytest.mark.django_db

BALANCE_BY_PERSPECTIVE = {
    "cause_to_effect": {"yes": 4, "no": 2},
    "effect_to_cause": {"yes": 2, "no": 4},
    "cause_to_effect_intervention": {"yes": 5, "no": 1},
    "effect_to_cause_intervention": {"yes": 1, "no": 5},
}
BALANCE_BY_DOMAIN = {"text": {"yes": 4, "no": 4}, "math": {"yes": 4, "no": 4}, "code": {"yes": 4, "no": 4}}
# The two example questions the checking model answers the other way.
DISPUTED = {"cb-03-effect_to_cause", "cb-06-cause_to_effect"}


def check_agreement_rows(project: Project) -> list[tuple]:
    """(question, "first" / "second", answer) for every checked question: the long rows the evaluation app's
    agreement functions read (Cohen's kappa between the first and the second answer)."""
    rows = []
    checked = (
        Item.objects.filter(project=project, group__kind="scenario", metadata__has_key="check")
        .order_by("pk")
        .values_list("pk", "metadata")
    )
    for pk, metadata in checked:
        check = metadata["check"]
        rows += [(pk, "first", check.get("first_answer")), (pk, "second", check.get("answer"))]
    return rows


def causalbench_project(owner, curator, annotators, slug="causalbench") -> Project:
    defaults = design_for("causalbench").project_defaults()
    project = Project.objects.create(name="CausalBench", slug=slug, design="causalbench", **defaults)
    Membership.objects.create(project=project, user=owner, role=Membership.Role.OWNER)
    Membership.objects.create(project=project, user=curator, role=Membership.Role.CURATOR)
    for annotator in annotators:
        Membership.objects.create(project=project, user=annotator, role=Membership.Role.ANNOTATOR)
    return project


def four(answers=("yes", "no", "yes", "no")):
    return [
        {
            "perspective": p,
            "question": f"Pergunta da perspectiva {p}?",
            "answer": a,
            "explanation": f"Porque {p}.",
        }
        for p, a in zip(PERSPECTIVES, answers)
    ]


@pytest.fixture
def checker(db, fake_llm, api_key):
    return ModelEndpoint.objects.create(
        name="checker",
        base_url=fake_llm.base_url,
        model="fake-checker",
        api_key_env=KEY_ENV,
        requests_per_minute=0,
        timeout_seconds=5,
    )


def test_a_new_causalbench_project_labels_questions_by_perspective(owner, curator, annotators):
    project = causalbench_project(owner, curator, annotators)
    assert project.answer_format == "yes_no" and project.label_set == PERSPECTIVES and project.overlap == 1


def test_a_scenario_needs_one_yes_no_question_per_perspective(owner, curator, annotators):
    project = causalbench_project(owner, curator, annotators)
    with pytest.raises(ScenarioInvalid, match="s1: needs exactly one question per perspective"):
        scenario_add(
            project=project, domain="text", context="Um cenário.", questions=four()[:3], external_id="s1"
        )
    with pytest.raises(ScenarioInvalid, match="s2, effect_to_cause: the answer must be yes or no"):
        scenario_add(
            project=project,
            domain="text",
            context="Um cenário.",
            questions=four(("yes", "talvez", "no", "no")),
            external_id="s2",
        )
    with pytest.raises(ScenarioInvalid, match="domain must be one of"):
        scenario_add(
            project=project, domain="poetry", context="Um cenário.", questions=four(), external_id="s3"
        )
    assert (
        not ItemGroup.objects.filter(project=project).exists()
        and not Item.objects.filter(project=project).exists()
    )


def test_code_is_highlighted_math_rendered_and_everything_else_escaped(owner, curator, annotators):
    project = causalbench_project(owner, curator, annotators)
    example_scenarios_load(project, read_example())
    design = design_for(project)
    code_item = Item.objects.get(project=project, external_id="cb-05-cause_to_effect")
    html = render_to_string(design.item_partial, {"item": code_item, "design": design})
    assert '<div class="code-scenario"' in html and "<span style=" in html
    assert '"peso"</span>' in html and "&gt;=" in html  # the code's own text, escaped inside the spans
    math_item = Item.objects.get(project=project, external_id="cb-03-cause_to_effect")
    html = render_to_string(design.item_partial, {"item": math_item, "design": design})
    assert "<math" in html and "<mi>T</mi>" in html and "$T$" not in html
    assert "Perspective" in html or "Perspectiva" in html

    hostile = scenario_add(
        project=project,
        domain="math",
        external_id="x1",
        questions=four(),
        context=r"<img src=x onerror=alert(1)> and $\href{javascript:alert(1)}{x}$ and $\text{<script>alert(2)</script>}$",
    )
    html = render_to_string(design.item_partial, {"item": hostile.items.first(), "design": design})
    assert "<img" not in html and "<script" not in html and "javascript:" not in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html
    warnings = design.item_warnings(hostile.items.first())
    assert warnings == []
    hostile.items.last().delete()
    assert "exactly one question per perspective" in " ".join(design.item_warnings(hostile.items.first()))


def test_the_example_goes_through_the_whole_pipeline(
    owner, curator, annotators, endpoint, checker, fake_llm, client_for
):
    # creation and the example's scenarios
    project = causalbench_project(owner, curator, annotators)
    counts = design_for(project).load_example(project, {"curator": curator})
    assert counts == {"scenarios": 6, "questions": 24}
    assert Item.objects.filter(project=project, status=Item.Status.IN_REVIEW).count() == 24

    # generation, mode 1: an imported question is classified and its scenario expanded to four
    imported = Item.objects.create(
        project=project,
        question="Se um aluno foi aprovado, é mais provável que ele tenha estudado?",
        context="Imagine um mundo em que estudar aumenta a chance de aprovação e nada mais a afeta.",
        reference_answer="yes",
        answer_by=Item.AnswerBy.HUMAN,
        status=Item.Status.PENDING,
        round=0,
        text_key="imported-1",
        external_id="cl-1",
    )
    fake_llm.script(
        Reply.json(
            {
                "perspective": "effect_to_cause",
                "answer": "yes",
                "explanation": "A aprovação torna o estudo mais provável.",
                "questions": [
                    {
                        "perspective": "cause_to_effect",
                        "question": "Se um aluno estudou, a aprovação fica mais provável?",
                        "answer": "yes",
                        "explanation": "Estudar aumenta a chance de aprovação.",
                    },
                    {
                        "perspective": "cause_to_effect_intervention",
                        "question": "Se obrigarmos um aluno a estudar, ele tem mais chance de ser aprovado?",
                        "answer": "yes",
                        "explanation": "A intervenção mantém o caminho.",
                    },
                    {
                        "perspective": "effect_to_cause_intervention",
                        "question": "Se aprovarmos um aluno por decreto, isso "
                        "torna mais provável que ele tenha estudado?",
                        "answer": "no",
                        "explanation": "A intervenção corta o caminho.",
                    },
                ],
            }
        )
    )
    job = job_create(
        project=project,
        kind="causalbench_expand",
        endpoint=endpoint,
        item_ids=[imported.pk],
        domain="text",
        enqueue=False,
    )
    run_now(job)
    assert (job.status, job.done, job.items_created) == ("succeeded", 1, 3)
    imported.refresh_from_db()
    group = imported.group
    assert group.kind == "scenario" and group.context.startswith("Imagine um mundo em que estudar")
    assert sorted(group.items.values_list("causal_class", flat=True)) == sorted(PERSPECTIVES)
    assert (
        imported.causal_class == "effect_to_cause" and imported.metadata["perspective"] == "effect_to_cause"
    )
    assert imported.status == Item.Status.IN_REVIEW and imported.reference_answer == "yes"
    created = group.items.exclude(pk=imported.pk)
    call = LLMCall.objects.get(job=job)
    assert {item.answer_provenance["call_id"] for item in created} == {call.pk}
    assert (
        Revision.objects.filter(item__in=created, kind=Revision.Kind.CREATED, llm_call_id=call.pk).count()
        == 3
    )

    # generation, mode 2: new scenarios with all four questions (the fake model's schema-valid reply)
    fake_llm.reset()
    fake_llm.responder = lambda received: Reply.json(
        {
            "scenario": "def f(x):\n    return 2 * x\n",
            "cause": "x",
            "effect": "f(x)",
            "questions": [
                {
                    "perspective": p,
                    "question": f"Pergunta gerada sobre f, perspectiva {p}?",
                    "answer": "yes" if n % 2 else "no",
                    "explanation": "Segue do código.",
                }
                for n, p in enumerate(PERSPECTIVES)
            ],
        }
    )
    job = job_create(
        project=project, kind="causalbench_scenario", endpoint=endpoint, count=2, domain="code", enqueue=False
    )
    run_now(job)
    assert (job.status, job.total, job.done, job.items_created) == ("succeeded", 2, 2, 8)
    generated = ItemGroup.objects.filter(
        project=project, kind="scenario", metadata__domain="code", items__origin=Item.Origin.GENERATED
    ).distinct()
    assert generated.count() == 2
    assert (
        "Cenários que já estão no benchmark" in fake_llm.requests[0].prompt
    )  # the example's code as examples

    # answer check, by another model: it answers the example's questions as the gold says except two
    gold = {
        item.question: (item.external_id, item.reference_answer)
        for item in Item.objects.filter(project=project, source="causalbench-example")
    }

    def second_model(received):
        question = re.search(r"Pergunta: (.+)", received.prompt).group(1).strip()
        external_id, answer = gold[question]
        if external_id in DISPUTED:
            answer = "no" if answer == "yes" else "yes"
        return Reply.json({"answer": answer, "explanation": f"Pelo grafo causal ({external_id})."})

    fake_llm.reset()
    fake_llm.responder = second_model
    example_ids = list(
        Item.objects.filter(project=project, source="causalbench-example").values_list("pk", flat=True)
    )
    with pytest.raises(JobInvalid, match="another model"):
        job_create(
            project=project,
            kind="causalbench_check",
            endpoint=endpoint,
            item_ids=list(created.values_list("pk", flat=True)),
            enqueue=False,
        )
    job = job_create(
        project=project, kind="causalbench_check", endpoint=checker, item_ids=example_ids, enqueue=False
    )
    run_now(job)
    assert (job.status, job.done) == ("succeeded", 24)
    assert Item.objects.filter(pk__in=example_ids, status=Item.Status.APPROVED).count() == 22
    assert set(adjudication_queue(project).values_list("external_id", flat=True)) == DISPUTED

    # answer check, by annotators who do not see the first answer (the expanded scenario's four questions)
    client = client_for(annotators[0])
    url = reverse("designs:causalbench_check", args=[project.slug])
    for _ in range(4):
        assert (
            client.post(url, {"take": "1"}).status_code == 302
        )  # the check queue hands out the next question
        page = client.get(url)
        item = page.context["item"]
        assert item.group_id == group.pk
        body = page.content.decode()
        assert item.question in body
        assert item.metadata["explanation"] not in body and "Second answer" not in body
        answer = item.reference_answer if item.causal_class != "cause_to_effect" else "no"  # one disagrees
        response = client.post(url, {"item": item.pk, "answer": answer, "explanation": "Pelo cenário."})
        assert response.status_code == 302
    assert client.get(url).context["item"] is None or client.get(url).context["item"].group_id != group.pk
    assert set(adjudication_queue(project).values_list("causal_class", flat=True)) >= {"cause_to_effect"}

    # adjudication by a curator: one keeps the first answer, one takes the second, one is rejected
    curator_client = client_for(curator)
    page = curator_client.get(reverse("designs:causalbench_adjudication", args=[project.slug]))
    assert page.status_code == 200 and len(page.context["items"]) == 3
    report = page.context["report"]
    assert (report.checked, report.agreed, report.disputed) == (28, 25, 3)
    assert report.disagreement_rate == pytest.approx(3 / 28)
    assert report.by_checker == {
        "model": {"checked": 24, "disagreed": 2},
        "annotator": {"checked": 4, "disagreed": 1},
    }
    # the example's 4 / 2, the expanded scenario's yes, the two generated code scenarios' no
    assert report.balance_by_perspective["cause_to_effect"] == {"yes": 4 + 1, "no": 2 + 2}
    first, second = (Item.objects.get(project=project, external_id=e) for e in sorted(DISPUTED))
    expanded = adjudication_queue(project).get(group=group)
    post = lambda item, answer: curator_client.post(  # noqa: E731
        reverse("designs:causalbench_adjudicate", args=[project.slug, item.pk]),
        {"answer": answer, "note": "ok"},
    )
    assert post(first, first.reference_answer).status_code == 302
    assert post(second, second.metadata["check"]["answer"]).status_code == 302
    assert post(expanded, "reject").status_code == 302
    second.refresh_from_db()
    assert (
        second.status == Item.Status.APPROVED
        and second.reference_answer == second.metadata["check"]["answer"]
    )
    assert second.revisions.filter(kind=Revision.Kind.EDIT, author=curator).exists()
    assert CurationDecision.objects.get(item=expanded).decision == "reject"
    assert adjudication_queue(project).count() == 0

    report = check_report(project)
    assert (report.checked, report.agreed, report.disputed, report.adjudicated) == (27, 25, 0, 2)

    # agreement between the first and the second answer (Cohen's kappa over the checked questions)
    table = RatingTable.from_rows(check_agreement_rows(project), categories=["yes", "no"])
    kappa = cohen_kappa(table)
    assert table.codes.shape == (2, 28) and 0.5 < kappa.mean.value < 1

    # release and export with CausalBench's own columns
    release = release_cut(project=project)
    release.refresh_from_db()
    approved = Item.objects.filter(project=project, status=Item.Status.APPROVED).count()
    # A scenario is released whole: the expanded one lost a question to adjudication, so it stays out.
    assert approved == 27 and release.counts["n_items"] == 24
    files = {f.path: (f.fields, list(f.rows)) for f in design_for(project).export_files(release)}
    fields, text_rows = files["causalbench/CausalBench_Text_Part.csv"]
    assert fields == ["Scenario and Question", "Question Type", "Ground Truth", "Explanation"]
    assert (
        len(text_rows) == 8
    )  # the two example text scenarios; not the expanded one without its rejected question
    row = next(
        r
        for r in text_rows
        if "cooperativa de milho" in r["Scenario and Question"] and r["Question Type"] == "Cause-to-Effect"
    )
    assert row["Ground Truth"] == "Yes" and row["Scenario and Question"].endswith("naquele talhão seja alta?")
    fields, math_rows = files["causalbench/CausalBench_Math_Part.csv"]
    assert fields[0] == "Mathematical Scenario" and len(math_rows) == 8
    adjudicated = next(
        r for r in math_rows if r["Question"] == second.question or r["Question"] == first.question
    )
    assert adjudicated["Ground Truth"] in ("Yes", "No")
    fields, code_rows = files["causalbench/CausalBench_Code_Part.csv"]
    assert fields[0] == "Code" and len(code_rows) == 8  # generated code scenarios were never checked
    assert {r["Question Type"] for r in code_rows} == {
        "Cause-to-Effect",
        "Effect-to-Cause",
        "Cause-to-Effect with Intervention",
        "Effect-to-Cause with Intervention",
    }
    assert json.loads(release.items.first().data["metadata"])["perspective"] in PERSPECTIVES


def test_the_yes_no_balance_is_reported_per_perspective_and_domain(owner, curator, annotators):
    project = causalbench_project(owner, curator, annotators)
    example_scenarios_load(project, read_example())
    report = check_report(project)
    assert report.balance_by_perspective == BALANCE_BY_PERSPECTIVE
    assert report.balance_by_domain == BALANCE_BY_DOMAIN
    assert (report.checked, report.unchecked, report.disagreement_rate) == (0, 24, None)


def test_the_author_of_the_first_answer_cannot_give_the_second(owner, curator, annotators):
    from designs.causalbench.checks import CheckRefused

    project = causalbench_project(owner, curator, annotators)
    group = scenario_add(
        project=project, domain="text", context="Um cenário.", questions=four(), external_id="a1"
    )
    item = group.items.first()
    Item.objects.filter(pk=item.pk).update(answer_author=annotators[1])
    item.refresh_from_db()
    with pytest.raises(CheckRefused):
        check_record(item=item, answer="yes", checker=annotators[1])
    assert questions_to_check(project).count() == 4
    Assignment.objects.create(
        item=item, annotator=annotators[0], round=item.round
    )  # the check queue handed it
    check_record(item=item, answer="no", checker=annotators[0])
    with pytest.raises(CheckRefused):
        check_record(item=item, answer="no", checker=annotators[2])
    with pytest.raises(CheckRefused):
        check_adjudicate(item=group.items.last(), curator=curator, answer="yes")


def test_a_scenario_reply_with_a_perspective_twice_is_kept_but_not_applied(
    owner, curator, annotators, endpoint, fake_llm
):
    project = causalbench_project(owner, curator, annotators)
    questions = four()
    questions[3]["perspective"] = "cause_to_effect"
    fake_llm.script(
        Reply.json(
            {
                "scenario": "Um cenário de teste com causas.",
                "cause": "a",
                "effect": "b",
                "questions": questions,
            }
        )
    )
    job = job_create(
        project=project, kind="causalbench_scenario", endpoint=endpoint, count=1, domain="text", enqueue=False
    )
    run_now(job)
    call = LLMCall.objects.get(job=job)
    assert call.status == LLMCall.Status.FAILED and "exactly one question per perspective" in call.error
    assert call.parsed is not None or call.raw_response
    assert not ItemGroup.objects.filter(project=project).exists()


def test_causalbench_jobs_are_refused_in_other_projects(project, endpoint):
    with pytest.raises(JobInvalid, match="belong to CausalBench projects"):
        job_create(
            project=project,
            kind="causalbench_scenario",
            endpoint=endpoint,
            count=1,
            domain="text",
            enqueue=False,
        )


def test_the_check_page_is_for_members_and_adjudication_for_curators(
    owner, curator, annotators, outsider, client_for, project
):
    causalbench = causalbench_project(owner, curator, annotators)
    check = reverse("designs:causalbench_check", args=[causalbench.slug])
    adjudication = reverse("designs:causalbench_adjudication", args=[causalbench.slug])
    assert client_for(outsider).get(check).status_code == 404
    assert client_for(annotators[0]).get(check).status_code == 200
    assert client_for(annotators[0]).get(adjudication).status_code == 403
    assert client_for(curator).get(adjudication).status_code == 200
    assert (
        client_for(curator).get(reverse("designs:causalbench_check", args=[project.slug])).status_code == 404
    )
    nav = client_for(curator).get(adjudication).content.decode()
    assert check in nav and adjudication in nav


@pytest.mark.django_db(transaction=True)  # the command runs the job in a thread with its own connection
def test_the_generate_command_writes_causalbench_scenarios(owner, curator, annotators, endpoint, fake_llm):
    from django.core.management import call_command

    project = causalbench_project(owner, curator, annotators)
    fake_llm.script(
        Reply.json(
            {"scenario": "Seja $X$ a causa de $Y = 2X$.", "cause": "X", "effect": "Y", "questions": four()}
        )
    )
    call_command(
        "generate",
        "causalbench-scenarios",
        "--project",
        project.slug,
        "--model",
        "fake",
        "--domain",
        "math",
        "--count",
        "1",
        "--here",
        "--json",
    )
    group = ItemGroup.objects.get(project=project)
    assert group.metadata["domain"] == "math" and group.items.count() == 4
    assert set(group.items.values_list("answer_by", flat=True)) == {Item.AnswerBy.MODEL}


def test_a_code_scenario_page_stays_under_150_kb_of_js_and_css_with_no_script_of_its_own(
    owner, curator, annotators, client_for
):
    from django.contrib.staticfiles import finders

    project = causalbench_project(owner, curator, annotators)
    example_scenarios_load(project, read_example())
    Item.objects.filter(project=project).exclude(group__metadata__domain="code").update(
        status=Item.Status.APPROVED
    )
    client = client_for(annotators[0])
    client.post(
        reverse("designs:causalbench_check", args=[project.slug]), {"take": "1"}
    )  # the queue hands one out
    page = client.get(reverse("designs:causalbench_check", args=[project.slug]))
    html = page.content.decode()
    assert page.context["item"].group.metadata["domain"] == "code" and '<div class="code-scenario"' in html
    assets = re.findall(r'<script[^>]+src="([^"]+)"', html) + re.findall(
        r'<link[^>]+href="([^"]+\.css)"', html
    )
    assert all(url.startswith("/static/") for url in assets), assets
    sizes = sum(Path(finders.find(url.removeprefix("/static/"))).stat().st_size for url in assets)
    assert sizes + len(html.encode()) < 150 * 1024  # the highlighting's inline styles included
    assert "<script>" not in html


def test_causalbench_jobs_start_from_the_generation_page(
    owner, curator, annotators, endpoint, checker, client_for
):
    from generation.models import GenerationJob

    project = causalbench_project(owner, curator, annotators)
    example_scenarios_load(project, read_example())
    client = client_for(curator)
    page = client.get(reverse("generation:project", args=[project.slug]))
    assert 'id="start-causalbench"' in page.content.decode()
    url = reverse("generation:job_start", args=[project.slug, "causalbench"])
    response = client.post(
        url,
        {
            "causalbench-endpoint": checker.pk,
            "causalbench-mode": "causalbench_check",
            "causalbench-domain": "text",
        },
    )
    assert response.status_code == 302
    job = GenerationJob.objects.get(project=project)
    assert job.kind == "causalbench_check" and len(job.params["item_ids"]) == 24
    response = client.post(
        url,
        {
            "causalbench-endpoint": endpoint.pk,
            "causalbench-mode": "causalbench_expand",
            "causalbench-domain": "text",
        },
    )
    assert response.status_code == 400 and "choose at least one item" in response.content.decode()
    response = client.post(
        url,
        {
            "causalbench-endpoint": endpoint.pk,
            "causalbench-mode": "causalbench_scenario",
            "causalbench-domain": "math",
            "causalbench-count": 3,
        },
    )
    job = GenerationJob.objects.filter(project=project).latest("pk")
    assert response.status_code == 302 and job.params == {"count": 3, "domain": "math"}


def test_the_project_page_partial_reports_the_checks_and_the_balance(owner, curator, annotators):
    project = causalbench_project(owner, curator, annotators)
    example_scenarios_load(project, read_example())
    design = design_for(project)
    context = design.project_context(project)
    assert context["check_report"].balance_by_domain == BALANCE_BY_DOMAIN
    html = render_to_string(
        design.project_partial, {"project": project, "design": design, "design_context": context}
    )
    assert 'id="check-report"' in html and "Cause-to-Effect with Intervention" in html


def test_a_published_causalbench_part_becomes_scenarios_of_four_questions(db):
    from annotation.models import ItemGroup, Project
    from designs.causalbench.design import DATA, ScenarioInvalid
    from designs.causalbench.published import causalbench_part_import

    project = Project.objects.create(
        name="CausalBench publicado", slug="cb-publicado", design="causalbench", answer_format="yes_no"
    )
    data = (DATA / "causalbench_text_published.csv").read_bytes()
    [scenario], _report = causalbench_part_import(project=project, data=data, filename="text.csv")

    assert scenario.context.startswith("Imagine a self-contained")
    questions = list(scenario.items.order_by("position_in_group"))
    assert [q.causal_class for q in questions] == [
        "cause_to_effect",
        "effect_to_cause",
        "cause_to_effect_intervention",
        "effect_to_cause_intervention",
    ]
    assert questions[0].question == "If it rains a lot in a week, is a high corn yield more likely?"
    assert [q.reference_answer for q in questions] == ["yes", "yes", "no", "no"]

    three = b"\n".join(data.split(b"\n")[:-4]) + b"\n"  # the last question left out
    with pytest.raises(ScenarioInvalid, match="rows 1, 2, 3: .*needs exactly one question per perspective"):
        causalbench_part_import(project=project, data=three, filename="text.csv")
    assert ItemGroup.objects.filter(project=project).count() == 1


def test_import_questions_reads_a_causalbench_project_s_published_part(db, capsys):
    from django.core.management import call_command

    from annotation.models import Project
    from designs.causalbench.design import DATA

    project = Project.objects.create(
        name="CausalBench via comando", slug="cb-comando", design="causalbench", answer_format="yes_no"
    )
    call_command("import_questions", str(DATA / "causalbench_text_published.csv"), project=project.slug)

    assert "1 scenarios added" in capsys.readouterr().out
    assert project.items.count() == 4


def test_the_import_page_routes_a_causalbench_project_s_published_part_to_its_reader(
    owner, curator, annotators, client_for
):
    from annotation.models import ImportBatch
    from designs.causalbench.design import DATA
    from tests.designs.published_pages import upload_and_import

    project = causalbench_project(owner, curator, annotators, slug="cb-pagina")
    data = (DATA / "causalbench_text_published.csv").read_bytes()
    three = b"\n".join(data.split(b"\n")[:-4]) + b"\n"  # the last question left out

    batch, page = upload_and_import(client_for(curator), project, "text.csv", three)
    assert batch.status == ImportBatch.Status.FAILED
    assert "rows 1, 2, 3: " in page and "needs exactly one question per perspective" in page
    assert not project.items.exists()

    batch, page = upload_and_import(client_for(curator), project, "text.csv", data)
    assert batch.status == ImportBatch.Status.DONE
    assert "1 scenarios added, four questions each" in page
    assert project.items.count() == 4
    assert batch.funnel["imported"] == 4


def test_the_annotator_sees_the_scenario_once_and_checks_the_answer_instead_of_rating_its_fluency(
    owner, curator, annotators, client_for
):
    from annotation.models import Judgment
    from annotation.queue import assignment_next
    from designs.causalbench.checks import check_record, questions_to_check

    project = causalbench_project(owner, curator, annotators)
    example_scenarios_load(project, read_example())
    assert (
        assignment_next(project=project, annotator=annotators[0]) is None
    )  # the check queue's, blind, first
    for question in questions_to_check(project):  # a model's second answer differs: reviewed in the open
        check_record(
            item=question, answer="no" if question.reference_answer == "yes" else "yes", model="checker"
        )
    assignment = assignment_next(project=project, annotator=annotators[0])
    scenario = assignment.item.group.context
    page = client_for(annotators[0]).get(reverse("annotation:assignment", args=[project.slug, assignment.pk]))
    html = page.content.decode()
    assert page.status_code == 200
    assert "Shared context" not in html and 'id="causalbench-scenario"' in html
    first_words = " ".join(scenario.split()[:4])
    assert html.count(first_words) <= 1 or "<pre" in html  # printed once (code is highlighted token by token)
    assert 'name="rating_answer_correct"' in html
    assert not any(
        f'name="rating_{key}"' in html for key in ("adherence", "fluency", "coherence", "relevance")
    )
    response = client_for(annotators[0]).post(
        reverse("annotation:assignment_judge", args=[project.slug, assignment.pk]),
        {"rating_answer_correct": "1", "vote": "accept", "causal_class": assignment.item.causal_class},
    )
    assert response.status_code == 302, response.content.decode()[:300]
    assert Judgment.objects.get(assignment=assignment).ratings == {"answer_correct": 1}


def test_questions_waiting_for_their_blind_check_count_as_work_on_the_home_page(
    owner, curator, annotators, client_for
):
    from annotation.queue import CHECK, REVIEW, waiting_counts

    project = causalbench_project(owner, curator, annotators)
    scenario_add(project=project, domain="text", context="Um cenário.", questions=four(), external_id="h1")
    assert questions_to_check(project).count() == 4
    assert waiting_counts(annotators[0], [project])[project.pk][CHECK] == 4
    assert waiting_counts(annotators[0], [project])[project.pk][REVIEW] == 0, (
        "the review queue holds them back"
    )
    Assignment.objects.create(item=questions_to_check(project).first(), annotator=annotators[0], round=1)
    assert waiting_counts(annotators[0], [project])[project.pk][CHECK] == 3
    page = client_for(annotators[0]).get(reverse("annotation:home")).content.decode()
    assert "3 to check" in page
