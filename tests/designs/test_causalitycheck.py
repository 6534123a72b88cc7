"""The CausalityCheck design: its example through the whole pipeline, and each invariant check on good and bad items.

Pipeline: a project of the design, bare seeds (the example's four-option items), a checklist job on the fake
model server writing what the seeds lack (answers scripted from the example), two annotators inspecting all
108 items, bulk approval, Cohen's kappa per task × variant cell, a release (whole and subsampled per cell) and
its one-file-per-cell export.
"""

import dataclasses
import json
import re

import pytest
from django.template.loader import render_to_string
from django.urls import reverse

from annotation.curation import ApprovalRule, items_bulk_approve
from annotation.designs import design_for
from annotation.judging import judgment_submit
from annotation.models import Item, Membership, Project
from annotation.queue import assignment_next
from designs.causalitycheck.design import DATA as DESIGN_DATA
from designs.causalitycheck.seeds import (
    VERDICTS,
    SeedData,
    SeedInvalid,
    checklist_specs,
    seed_create,
    seed_derive,
    unanswerable_answer_text,
)
from evaluation.selectors.cells import cell_kappa_grid
from evaluation.services import ReleaseError, release_create, release_cut
from generation.models import GenerationJob, LLMCall
from generation.services import job_create
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
EXAMPLE = json.loads((DESIGN_DATA / "causalitycheck.json").read_text(encoding="utf-8"))
SEEDS = {seed["external_id"]: seed for seed in EXAMPLE["seeds"]}
ITEM_FIELDS = ("external_id", "context", "question", "options", "answer_index")


@pytest.fixture
def cc_project(owner, curator, annotators):
    design = design_for("causalitycheck")
    project = Project.objects.create(
        name="Checklist",
        slug="checklist",
        design="causalitycheck",
        language="pt-BR",
        **design.project_defaults(),
    )
    Membership.objects.create(user=owner, project=project, role=Membership.Role.OWNER)
    Membership.objects.create(user=curator, project=project, role=Membership.Role.CURATOR)
    for annotator in annotators[:2]:
        Membership.objects.create(user=annotator, project=project, role=Membership.Role.ANNOTATOR)
    return project


@pytest.fixture
def example_project(cc_project, owner):
    counts = design_for(cc_project).load_example(cc_project, {"admin": owner})
    assert counts == {"seeds": 3, "items": 108}
    return cc_project


def bare(seed: dict) -> dict:
    return {name: seed[name] for name in ITEM_FIELDS}


def example_responder(received):
    """Answer each checklist prompt with the example's text for the seed it is about."""
    step = received.body["response_format"]["json_schema"]["name"].removeprefix("checklist_")
    prompt = received.prompt
    if step == "paraphrase":
        seed = next(
            s for s in SEEDS.values() if s["unanswerable_context"] in prompt or s["context"] in prompt
        )
        key = (
            "paraphrased_unanswerable_context"
            if seed["unanswerable_context"] in prompt
            else "paraphrased_context"
        )
        return Reply.json({"context": seed[key]})
    seed = next(s for s in SEEDS.values() if s["question"] in prompt)
    verdicts = {entry["verdict"]: entry["explanation"] for entry in seed["verdicts"]}
    if step == "verdict":
        [verdict] = [v for v in VERDICTS if re.search(rf"(?<!\w){v}:", prompt)]
        return Reply.json({"explanation": verdicts[verdict]})
    return Reply.json(
        {
            "virtual_entity": {"entity": seed["entity"], "invented_entity": seed["invented_entity"]},
            "unanswerable": {"context": seed["unanswerable_context"], "removed_cause": "a causa-chave"},
            "distractor": {"sentence": seed["distractor_sentence"]},
            "chains_double": {
                "correct_chain": seed["causal_chain"],
                "corrupted_chain": seed["corrupted_chain"],
            },
            "chain": {"chain": seed["causal_chain"]},
            "chain_corrupt": {"chain": seed["corrupted_chain"]},
            "verdicts_double": verdicts,
        }[step]
    )


def expected_items(external_ids) -> dict[str, dict]:
    specs = {}
    for external_id in external_ids:
        seed = SeedData.from_dict(SEEDS[external_id])
        for spec in checklist_specs(seed, unanswerable_answer=unanswerable_answer_text("pt-BR")):
            specs[spec["external_id"]] = spec
    return specs


def inspect_all(project, annotators, label_for, vote_for=lambda item, annotator: "accept") -> int:
    """Each annotator takes items from the queue until none is left, and judges them."""
    judged = 0
    for annotator in annotators:
        while (assignment := assignment_next(project=project, annotator=annotator)) is not None:
            item = assignment.item
            vote = vote_for(item, annotator)
            judgment_submit(
                assignment=assignment,
                ratings={"validity": 5, "fluency": 4},
                vote=vote,
                causal_class=label_for(item, annotator),
                comment="" if vote == "accept" else "O item não serve.",
            )
            judged += 1
    return judged


# --- the whole pipeline ----------------------------------------------------------------------


def test_the_example_goes_from_bare_seeds_to_a_per_cell_export(
    cc_project, endpoint, fake_llm, curator, annotators
):
    first, second = annotators[:2]
    for seed in EXAMPLE["seeds"]:
        seed_create(project=cc_project, spec=bare(seed))
    fake_llm.responder = example_responder

    # Generation: with the double prompt, 7 calls per seed write what it lacks; then its 36 items.
    job = job_create(project=cc_project, kind="checklist", endpoint=endpoint, user=curator, enqueue=False)
    run_now(job)
    assert job.status == GenerationJob.Status.SUCCEEDED
    assert (job.total, job.done, job.failed, job.items_created) == (21, 21, 0, 108)
    steps = sorted(call.purpose.split(":")[0] for call in LLMCall.objects.filter(job=job))
    assert steps == sorted(
        [
            "virtual-entity",
            "unanswerable",
            "paraphrase",
            "paraphrase-unanswerable",
            "distractor",
            "chains-double",
            "verdicts-double",
        ]
        * 3
    )

    # The items are exactly those the example's texts give, linked to seed, cell and siblings, all checks passing.
    items = list(Item.objects.filter(project=cc_project).prefetch_related("options").order_by("pk"))
    expected = expected_items(SEEDS)
    assert len(items) == 108 and {item.external_id for item in items} == set(expected)
    design = design_for(cc_project)
    for item in items:
        spec = expected[item.external_id]
        assert (item.question, item.context, item.reference_answer, item.causal_class) == (
            spec["question"],
            spec["context"],
            spec["reference_answer"],
            spec["label"],
        )
        assert [option.text for option in item.options.all()] == spec["options"]
        assert item.group.external_id == spec["seed"] and item.group.kind == "seed"
        assert {key: item.metadata[key] for key in ("task", "variant", "seed", "sibling_key", "cell")} == {
            key: spec[key] for key in ("task", "variant", "seed", "sibling_key", "cell")
        }
        assert (item.status, item.round) == (Item.Status.IN_REVIEW, 1)
        assert design.item_warnings(item) == []
    chain_item = next(item for item in items if item.external_id == "cc-01/PS-PJ/correct")
    assert chain_item.answer_by == Item.AnswerBy.MODEL
    assert (
        chain_item.answer_provenance["call_id"]
        == LLMCall.objects.get(
            job=job, purpose__startswith="chains-double", purpose__endswith=f":{chain_item.group_id}"
        ).pk
    )

    # Annotation: two annotators inspect every item. The second swaps two verdicts in one ID-CVA quartet and
    # rejects one VCR-PJ item.
    swapped = {
        "cc-01/ID-CVA/correct_and_reliable": "correct_but_prone_to_error",
        "cc-01/ID-CVA/correct_but_prone_to_error": "correct_and_reliable",
    }
    rejected = "cc-02/VCR-PJ/corrupted"

    def label_for(item, annotator):
        return swapped.get(item.external_id, item.causal_class) if annotator == second else item.causal_class

    def vote_for(item, annotator):
        return "reject" if annotator == second and item.external_id == rejected else "accept"

    assert inspect_all(cc_project, [first, second], label_for, vote_for) == 216

    # Approval: every item both accepted.
    rule = ApprovalRule(votes="all_accept", min_mean_rating=4)
    ids = list(Item.objects.filter(project=cc_project).values_list("pk", flat=True))
    result = items_bulk_approve(project=cc_project, curator=curator, rule=rule, item_ids=ids)
    assert len(result.approved) == 107
    assert result.no_longer_matching == [Item.objects.get(external_id=rejected).pk]

    # Agreement: Table 3's layout; ID-CVA is the one cell below 0.8.
    grid = cell_kappa_grid(cc_project, rows="variant", columns="task")
    assert [value for value, _code in grid.rows] == ["ps", "pu", "id", "vcr"]
    assert [code for _value, code in grid.columns] == ["OP", "AJ", "PJ", "CVA"]
    assert [(cell.row, cell.column) for cell in grid.flagged] == [("id", "cva")]
    weak = grid.cells[("id", "cva")]
    assert weak.n_items == 12 and weak.kappa.value == pytest.approx((10 / 12 - 0.25) / 0.75)
    assert all(cell.kappa.value == 1.0 for key, cell in grid.cells.items() if key != ("id", "cva"))
    assert len(grid.cells) == 16 and grid.cells[("ps", "op")].n_items == 3

    # Release: all approved items; one file per cell with the paper's field names.
    release = release_cut(project=cc_project)
    assert release.counts["n_items"] == 107
    files = {export.path: list(export.rows) for export in design.export_files(release)}
    sizes = {
        path.removeprefix("causalitycheck/").removesuffix(".jsonl"): len(rows) for path, rows in files.items()
    }
    assert sizes == {
        f"{variant}-{task}": {"OP": 3, "AJ": 6, "PJ": 6, "CVA": 12}[task] - ((variant, task) == ("VCR", "PJ"))
        for variant in ("PS", "PU", "ID", "VCR")
        for task in ("OP", "AJ", "PJ", "CVA")
    }
    pj = {row["id"]: row for row in files["causalitycheck/PS-PJ.jsonl"]}
    assert pj["cc-01/PS-PJ/correct"]["answer"] == 4 and pj["cc-01/PS-PJ/correct"]["correctness"] == 1
    assert pj["cc-01/PS-PJ/corrupted"]["correctness"] == 0
    assert pj["cc-01/PS-PJ/corrupted"]["causal_chain"] == SEEDS["cc-01"]["corrupted_chain"]
    aj = {row["id"]: row for row in files["causalitycheck/VCR-AJ.jsonl"]}
    assert (
        aj["cc-03/VCR-AJ/unanswerable"]["answerable"] == 0
        and "Plano Torvelim" in aj["cc-03/VCR-AJ/unanswerable"]["context"]
    )
    cva = {row["id"]: row for row in files["causalitycheck/PU-CVA.jsonl"]}
    assert cva["cc-02/PU-CVA/incorrect_and_unreliable"]["verdict"] == "incorrect_and_unreliable"
    assert set(files["causalitycheck/PS-OP.jsonl"][0]) == {
        "id",
        "seed",
        "split",
        "context",
        "question",
        "choice_1",
        "choice_2",
        "choice_3",
        "choice_4",
        "answer",
    }

    # A release subsampled to at most 4 items per cell: OP cells keep their 3, the others 4.
    small = release_cut(project=cc_project, subsample={"field": "cell", "max_per_stratum": 4})
    assert small.counts["n_items"] == 4 * 3 + 12 * 4 and small.subsample == {
        "field": "cell",
        "max_per_stratum": 4,
    }
    sizes = {export.path: len(list(export.rows)) for export in design.export_files(small)}
    assert sizes["causalitycheck/PS-OP.jsonl"] == 3 and set(sizes.values()) == {3, 4}
    again = release_cut(project=cc_project, subsample={"field": "cell", "max_per_stratum": 4})
    assert set(again.items.values_list("item_id", flat=True)) == set(
        small.items.values_list("item_id", flat=True)
    )


@pytest.mark.parametrize(
    "last", [None, "incorrect_and_unreliable"], ids=["as they come", "a verdict answers last"]
)
def test_single_prompts_take_eleven_calls_per_seed_and_give_the_same_items(
    cc_project, endpoint, fake_llm, last
):
    """With one prompt per verdict the checklist is derived once every ingredient and every verdict is in,
    whichever answer comes last (here also a verdict's, long after the others: a checklist derived as soon as the
    other ingredients were in would be refused)."""
    group = seed_create(project=cc_project, spec=bare(SEEDS["cc-02"]))

    def responder(received):
        reply = example_responder(received)
        step = received.body["response_format"]["json_schema"]["name"]
        if last and step == "checklist_verdict" and re.search(rf"(?<!\w){last}:", received.prompt):
            return dataclasses.replace(reply, delay=0.8)  # the others are all in long before
        return reply

    fake_llm.responder = responder

    job = job_create(
        project=cc_project,
        kind="checklist",
        endpoint=endpoint,
        group_ids=[group.pk],
        double_prompt=False,
        enqueue=False,
    )
    run_now(job)

    assert (job.status, job.total, job.done, job.items_created) == (
        GenerationJob.Status.SUCCEEDED,
        11,
        11,
        36,
    )
    steps = sorted(call.purpose.split(":")[0] for call in LLMCall.objects.filter(job=job))
    assert steps == sorted(
        [
            "virtual-entity",
            "unanswerable",
            "paraphrase",
            "paraphrase-unanswerable",
            "distractor",
            "chain",
            "chain-corrupt",
            *[f"verdict-{v}" for v in VERDICTS],
        ]
    )
    expected = expected_items(["cc-02"])
    for item in Item.objects.filter(group=group):
        assert (item.context, item.reference_answer) == (
            expected[item.external_id]["context"],
            expected[item.external_id]["reference_answer"],
        )


def test_a_model_entity_missing_from_the_seed_is_not_used_and_no_items_are_made(
    cc_project, endpoint, fake_llm
):
    group = seed_create(project=cc_project, spec=bare(SEEDS["cc-03"]))

    def responder(received):
        if "virtual_entity" in received.body["response_format"]["json_schema"]["name"]:
            return Reply.json({"entity": "Banco Central", "invented_entity": "Banco Zelório"})
        return example_responder(received)

    fake_llm.responder = responder
    job = job_create(project=cc_project, kind="checklist", endpoint=endpoint, enqueue=False)
    run_now(job)

    call = LLMCall.objects.get(job=job, purpose=f"virtual-entity:{group.pk}")
    assert call.status == LLMCall.Status.SUCCEEDED and "does not appear in the seed" in call.error
    group.refresh_from_db()
    assert "entity" not in group.metadata["ingredients"] and not Item.objects.filter(group=group).exists()
    assert job.items_created == 0


def test_a_checklist_job_refuses_seeds_that_have_their_items(example_project, endpoint):
    from generation.services import JobInvalid

    group = example_project.groups.first()
    with pytest.raises(JobInvalid) as refused:
        job_create(
            project=example_project, kind="checklist", endpoint=endpoint, group_ids=[group.pk], enqueue=False
        )
    assert "without its checklist" in refused.value.errors["group_ids"]
    with pytest.raises(JobInvalid, match="no seed of this project lacks its checklist"):
        job_create(project=example_project, kind="checklist", endpoint=endpoint, enqueue=False)


# --- seeds -----------------------------------------------------------------------------------


def test_the_example_loads_as_three_seeds_of_thirty_six_items_each(example_project):
    groups = list(example_project.groups.order_by("pk"))
    assert [group.external_id for group in groups] == ["cc-01", "cc-02", "cc-03"]
    counts = {}
    for item in Item.objects.filter(project=example_project):
        counts[item.metadata["cell"]] = counts.get(item.metadata["cell"], 0) + 1
    assert counts == {
        f"{v}-{t}": {"OP": 3, "AJ": 6, "PJ": 6, "CVA": 12}[t]
        for v in ("PS", "PU", "ID", "VCR")
        for t in ("OP", "AJ", "PJ", "CVA")
    }
    assert seed_derive(group=groups[0]) == []  # derived once only


@pytest.mark.parametrize(
    "change, message",
    [
        ({"options": ["só uma"]}, "options must be a list of four"),
        ({"answer_index": 4}, "answer_index must be 0, 1, 2 or 3"),
        ({"question": " "}, "question is missing"),
    ],
)
def test_a_malformed_seed_is_refused_naming_the_field(cc_project, change, message):
    with pytest.raises(SeedInvalid, match=message):
        seed_create(project=cc_project, spec={**bare(SEEDS["cc-01"]), **change}, where="seeds.json, seed 1")
    assert not cc_project.groups.exists()


def test_a_seed_whose_verdicts_are_incomplete_is_not_derived(cc_project):
    spec = {**SEEDS["cc-01"], "verdicts": SEEDS["cc-01"]["verdicts"][:3]}
    group = seed_create(project=cc_project, spec=spec)
    with pytest.raises(SeedInvalid, match="verdicts must hold one explanation for each"):
        seed_derive(group=group)
    assert not Item.objects.filter(project=cc_project).exists()


# --- invariant checks ------------------------------------------------------------------------


def warnings_of(project, external_id):
    return design_for(project).item_warnings(Item.objects.get(project=project, external_id=external_id))


def test_every_item_of_the_example_passes_every_check(example_project):
    design = design_for(example_project)
    assert all(design.item_warnings(item) == [] for item in Item.objects.filter(project=example_project))


def test_a_variant_must_keep_its_sources_question_options_and_answer(example_project):
    Item.objects.filter(external_id="cc-01/PU-OP/original").update(question="Qual foi a causa da seca?")
    assert "This variant's question differs from its source's." in warnings_of(
        example_project, "cc-01/PU-OP/original"
    )
    pu = Item.objects.get(external_id="cc-02/PU-OP/original")
    pu.options.filter(position=0).update(text="Outra opção.")
    assert "This variant's options differ from its source's." in warnings_of(
        example_project, "cc-02/PU-OP/original"
    )
    pj = Item.objects.get(external_id="cc-03/ID-PJ/correct")
    Item.objects.filter(pk=pj.pk).update(
        reference_answer="Plano Real → inflação menor → mais frango e iogurte"
    )
    assert "This variant's reference answer differs from its source's." in warnings_of(
        example_project, "cc-03/ID-PJ/correct"
    )
    assert warnings_of(example_project, "cc-03/PU-PJ/correct") == []


def test_an_irrelevant_disturbance_may_only_insert_text(example_project):
    item = Item.objects.get(external_id="cc-01/ID-OP/original")
    Item.objects.filter(pk=item.pk).update(
        context=item.context.replace("bem menos energia", "um pouco menos energia")
    )
    assert any("instead of only adding" in w for w in warnings_of(example_project, "cc-01/ID-OP/original"))
    source = Item.objects.get(external_id="cc-01/PS-OP/original")
    Item.objects.filter(pk=item.pk).update(context=source.context)
    assert any("adds nothing" in w for w in warnings_of(example_project, "cc-01/ID-OP/original"))


def test_a_virtual_item_keeps_no_trace_of_the_real_entity(example_project):
    item = Item.objects.get(external_id="cc-02/VCR-CVA/correct_and_reliable")
    Item.objects.filter(pk=item.pk).update(reference_answer=item.reference_answer + " Como fez a EMBRAPA.")
    assert any("“Embrapa” still appears" in w for w in warnings_of(example_project, item.external_id))
    option = Item.objects.get(external_id="cc-03/VCR-AJ/answerable").options.get(position=3)
    option.text = "Deixaram de usar a moeda do plano real."  # any case
    option.save()
    assert any(
        "“Plano Real” still appears" in w for w in warnings_of(example_project, "cc-03/VCR-AJ/answerable")
    )


def test_siblings_must_share_question_and_options(example_project):
    unanswerable = Item.objects.get(external_id="cc-01/PS-AJ/unanswerable")
    unanswerable.options.filter(position=2).update(text="As termelétricas ficaram mais baratas.")
    assert any(
        "should share the options" in w for w in warnings_of(example_project, "cc-01/PS-AJ/answerable")
    )
    Item.objects.filter(external_id="cc-02/PS-PJ/corrupted").update(question="Outra pergunta?")
    assert any("should share the question" in w for w in warnings_of(example_project, "cc-02/PS-PJ/correct"))


def test_a_correct_chain_must_end_at_the_answer_option(example_project):
    wrong_end = SEEDS["cc-01"]["causal_chain"].replace(
        "contas de luz mais caras", "contas de luz mais baratas"
    )
    Item.objects.filter(external_id="cc-01/PS-PJ/correct").update(reference_answer=wrong_end)
    assert any(
        "should end at the answer option (D)" in w
        for w in warnings_of(example_project, "cc-01/PS-PJ/correct")
    )
    Item.objects.filter(external_id="cc-02/PS-PJ/correct").update(reference_answer="sem elos")
    assert any("should read like" in w for w in warnings_of(example_project, "cc-02/PS-PJ/correct"))
    # A corrupted chain may end anywhere.
    assert warnings_of(example_project, "cc-01/PS-PJ/corrupted") == []


def test_a_verdict_quartet_must_cover_all_four_verdicts(example_project):
    Item.objects.filter(external_id="cc-03/PU-CVA/correct_but_prone_to_error").update(
        causal_class="correct_and_reliable"
    )
    for verdict in VERDICTS:
        assert any(
            "each of the four verdicts once" in w
            for w in warnings_of(example_project, f"cc-03/PU-CVA/{verdict}")
        )
    assert warnings_of(example_project, "cc-03/PS-CVA/correct_and_reliable") == []


# --- pages and settings ----------------------------------------------------------------------


def test_the_kappa_table_page_flags_weak_cells_for_curators_only(
    example_project, client_for, curator, annotators
):
    def label_for(item, annotator):
        if annotator == annotators[1] and item.metadata["cell"] == "PU-AJ":
            return "answerable"
        return item.causal_class

    inspect_all(example_project, annotators[:2], label_for)
    url = reverse("evaluation:agreement_cells", args=[example_project.slug])
    page = client_for(curator).get(url)
    assert page.status_code == 200
    html = page.content.decode()
    assert html.count('class="flagged"') == 1 and "1 cell needs attention." in html
    assert (
        url
        in client_for(curator)
        .get(reverse("evaluation:agreement", args=[example_project.slug]))
        .content.decode()
    )
    assert client_for(annotators[0]).get(url).status_code in (403, 404)
    votes = client_for(curator).get(url, {"criterion": "vote"}).content.decode()
    assert (
        votes.count('class="flagged"') == 16
    )  # every vote "accept": kappa undefined, so every cell is flagged


def test_the_demo_inspection_makes_causal_validity_the_weakest_column(cc_project, owner, curator, annotators):
    users = {"admin": owner, "annotator1": annotators[0], "annotator2": annotators[1]}
    counts = design_for(cc_project).load_example(cc_project, users)
    assert counts == {"seeds": 3, "items": 108, "judgments": 216}
    grid = cell_kappa_grid(cc_project, rows="variant", columns="task")
    assert {cell.column for cell in grid.flagged} == {"cva"} and len(grid.flagged) == 4
    assert all(item.round_judged == 2 for item in Item.objects.filter(project=cc_project))


def test_the_design_defaults_and_templates(cc_project, example_project):
    design = design_for(cc_project)
    assert (
        cc_project.overlap == 2
        and "unanswerable" in cc_project.label_set
        and design.agreement_fields() == ["task", "variant"]
    )
    item = Item.objects.get(project=example_project, external_id="cc-01/VCR-PJ/corrupted")
    html = render_to_string(design.item_partial, {"item": item, "design": design})
    assert "VCR-PJ" in html and "Sobradinho → Quelmira" in html and "invalid_chain" in html
    assert "Cohen" in render_to_string(design.help_template, {"design": design})


def test_a_malformed_subsample_is_refused(example_project):
    Item.objects.filter(project=example_project).update(status=Item.Status.APPROVED)
    with pytest.raises(ReleaseError, match="max_per_stratum"):
        release_create(project=example_project, subsample={"field": "cell", "max_per_stratum": 0})
    with pytest.raises(ReleaseError, match="metadata field"):
        release_create(project=example_project, subsample={"max_per_stratum": 3})


def test_a_curator_starts_a_checklist_job_over_rest(cc_project, endpoint, client_for, curator):
    group = seed_create(project=cc_project, spec=bare(SEEDS["cc-01"]))
    url = f"/api/v1/projects/{cc_project.slug}/jobs/"
    response = client_for(curator).post(
        url,
        {"kind": "checklist", "endpoint": endpoint.pk, "group_ids": [group.pk], "double_prompt": False},
        content_type="application/json",
    )
    assert response.status_code == 201, response.content
    job = GenerationJob.objects.get(pk=response.json()["id"])
    assert job.params["group_ids"] == [group.pk] and job.params["double_prompt"] is False
    assert set(job.params["templates"]) == {
        "virtual-entity",
        "unanswerable",
        "paraphrase",
        "distractor",
        "chains-double",
        "chain",
        "chain-corrupt",
        "verdicts-double",
        "verdict",
    }
    refused = client_for(curator).post(
        url,
        {"kind": "checklist", "endpoint": endpoint.pk, "group_ids": [group.pk + 99]},
        content_type="application/json",
    )
    assert refused.status_code == 400 and "group_ids" in refused.json()


def test_the_generation_page_starts_a_checklist_job_for_the_seeds_without_one(
    cc_project, endpoint, client_for, curator
):
    seed_create(project=cc_project, spec=bare(SEEDS["cc-01"]))
    page = client_for(curator).get(reverse("generation:project", args=[cc_project.slug]))
    assert "1 seed has no checklist yet." in page.content.decode()
    response = client_for(curator).post(
        reverse("generation:job_start", args=[cc_project.slug, "checklist"]),
        {"checklist-endpoint": endpoint.pk},
    )
    assert response.status_code == 302
    job = GenerationJob.objects.get(project=cc_project)
    assert job.kind == "checklist" and job.params["double_prompt"] is False  # the box was left unticked


@pytest.mark.django_db(transaction=True)  # --here runs the job in a thread with its own connection
def test_the_generate_command_writes_the_checklist_of_named_seeds(cc_project, endpoint, fake_llm, capsys):
    from django.core.management import CommandError, call_command

    seed_create(project=cc_project, spec=bare(SEEDS["cc-01"]))
    seed_create(project=cc_project, spec=bare(SEEDS["cc-02"]))
    fake_llm.responder = example_responder
    with pytest.raises(CommandError, match="no item group 'cc-09'"):
        call_command(
            "generate", "checklist", "--project", cc_project.slug, "--model", "fake", "--seeds", "cc-09"
        )
    call_command(
        "generate",
        "checklist",
        "--project",
        cc_project.slug,
        "--model",
        "fake",
        "--seeds",
        "cc-02",
        "--here",
        "--json",
    )
    summary = json.loads(capsys.readouterr().out)
    assert summary["status"] == "succeeded" and summary["done"] == 7
    assert Item.objects.filter(project=cc_project, group__external_id="cc-02").count() == 36
    assert not Item.objects.filter(project=cc_project, group__external_id="cc-01").exists()


def test_the_release_form_cuts_a_subsampled_release_or_says_what_is_missing(
    example_project, client_for, curator
):
    Item.objects.filter(project=example_project).update(status=Item.Status.APPROVED)
    url = reverse("evaluation:release_list", args=[example_project.slug])
    form = {"seed": 13, "train": 0.8, "dev": 0.1, "test": 0.1, "license": "cc-by-4.0", "notes": ""}
    half = client_for(curator).post(url, {**form, "stratify_by": "cell"})
    assert half.status_code == 200 and "give both the field and the number" in half.content.decode()
    cut = client_for(curator).post(url, {**form, "stratify_by": "cell", "max_per_stratum": 2})
    assert cut.status_code == 302
    release = example_project.releases.get()
    assert release.subsample == {"field": "cell", "max_per_stratum": 2}
