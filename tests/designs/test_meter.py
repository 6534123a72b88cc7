"""The METER example dataset through the whole pipeline: creation, de-contamination by three models on the fake
server, pair verification, generation, editing, filtering, approval, agreement per stage, release and export."""

import io
import json
import re
import zipfile

import pytest
from django.urls import reverse

from annotation import queue
from annotation.designs import design_for
from annotation.judging import item_edit, judgment_submit
from annotation.models import Item, ItemGroup, Judgment, Membership
from annotation.projects import project_create
from annotation.services import item_close
from designs.meter import pipeline
from designs.meter.stems import DATA as DESIGN_DATA
from designs.meter.stems import LETTERS, letter_balance, option_positions, stem_bank
from evaluation.releases.export import export_release
from evaluation.selectors import project_agreement
from evaluation.services import release_cut
from generation.models import LLMCall, ModelEndpoint
from generation.services import job_create
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

EXAMPLE = json.loads((DESIGN_DATA / "meter.json").read_text(encoding="utf-8"))
BY_CONTEXT = {entry["context"]: entry for entry in EXAMPLE["entries"]}
CONTAMINATED = "meter-04"  # one of the three models "remembers" that the reservoir drowned the falls
REJECTED_IN_VERIFICATION = "meter-03"
PASS = dict.fromkeys(pipeline.FILTER_CRITERIA, 1)


def responder(received):
    """Decontamination: model-b says yes for meter-04's pair, every other vote is no. Questions: the example's."""
    prompt = received.prompt
    if "Evento A:" in prompt or "Event A:" in prompt:
        contaminated = next(e for e in EXAMPLE["entries"] if e["external_id"] == CONTAMINATED)
        yes = received.body["model"] == "model-b" and contaminated["cause"] in prompt
        return Reply.json({"causal": "yes" if yes else "no"})
    context = re.search(r"Parágrafo: (.*?)\n\nEvento causa:", prompt, re.DOTALL).group(1)
    level = re.search(r"escreva uma pergunta (L[123])", prompt).group(1)
    spec = next(q for q in BY_CONTEXT[context]["questions"] if q["level"] == level)
    options = {option["role"]: option for option in spec["options"]}
    return Reply.json(
        {
            "question": spec["question"],
            "answer": options["correct"]["text"],
            **{
                role: {"option_text": options[role]["text"], "reasoning": options[role]["rationale"]}
                for role in ("contradictory", "unfounded", "reversal", "irrelevant")
            },
        }
    )


@pytest.fixture
def meter(owner, curator, annotators):
    project = project_create(name="METER", slug="meter", design="meter", created_by=owner)
    Membership.objects.create(user=curator, project=project, role=Membership.Role.CURATOR)
    for annotator in annotators:
        Membership.objects.create(user=annotator, project=project, role=Membership.Role.ANNOTATOR)
    design_for(project).load_example(project, {})
    return project


@pytest.fixture
def models(endpoint, fake_llm):
    fake_llm.responder = responder
    ModelEndpoint.objects.filter(pk=endpoint.pk).update(model="model-a")
    others = [
        ModelEndpoint.objects.create(
            name=name,
            base_url=fake_llm.base_url,
            model=name,
            api_key_env=KEY_ENV,
            requests_per_minute=0,
            timeout_seconds=5,
        )
        for name in ("model-b", "model-c")
    ]
    return [ModelEndpoint.objects.get(pk=endpoint.pk), *others]


def work_the_queue(project, annotators, decide):
    """Every annotator takes items from the queue until none is left; ``decide`` gives their judgment."""
    judged = 0
    for _ in range(50):
        took = False
        for annotator in annotators:
            assignment = queue.assignment_next(project=project, annotator=annotator)
            if assignment is None:
                continue
            took = True
            item = Item.objects.select_related("group").get(pk=assignment.item_id)
            vote, ratings = decide(item, annotator)
            judgment_submit(assignment=assignment, ratings=ratings, vote=vote, causal_class="", comment="")
            judged += 1
        if not took:
            return judged
    raise AssertionError("the queue never emptied")


def entry(project, external_id) -> ItemGroup:
    return ItemGroup.objects.get(project=project, external_id=external_id)


def test_a_meter_project_starts_with_its_design_defaults_and_example_pairs(meter):
    assert meter.answer_format == "multiple_choice" and meter.label_set == ["L1", "L2", "L3"]
    assert [c["key"] for c in meter.criteria] == list(pipeline.FILTER_CRITERIA)
    assert {(c["min"], c["max"]) for c in meter.criteria} == {(0, 1)}
    assert pipeline.stage_counts(meter) == {"pair": 4}
    assert [len(stem_bank(lang)[level]) for lang in ("pt-BR", "en") for level in ("L1", "L2", "L3")] == [
        8,
        4,
        5,
    ] * 2


def test_letters_are_shuffled_with_the_seed_and_their_balance_is_reported():
    assert option_positions(key="x-L1", seed=13) == option_positions(key="x-L1", seed=13)
    placements = [option_positions(key=f"e{n}-L1", seed=13)["correct"] for n in range(500)]
    report = letter_balance([LETTERS[p] for p in placements])
    assert report["total"] == 500 and report["even"] and set(report["counts"]) == set(LETTERS)
    assert letter_balance(["A"] * 20)["even"] is False


def test_the_example_goes_through_the_whole_pipeline(
    meter, models, fake_llm, owner, curator, annotators, client_for, tmp_path
):
    # --- de-contamination: three models, without the context; every vote is stored -----------------
    job = job_create(
        project=meter, kind="decontamination", endpoint=models[0], voters=models[1:], enqueue=False
    )
    assert job.total == 12
    run_now(job)
    assert job.status == "succeeded" and job.done == 12
    decontamination_prompts = [r.prompt for r in fake_llm.completions if "Evento A:" in r.prompt]
    assert len(decontamination_prompts) == 12
    assert not any(
        spec["context"][:60] in prompt for prompt in decontamination_prompts for spec in EXAMPLE["entries"]
    )
    for external_id in ("meter-01", "meter-02", "meter-03", "meter-04"):
        votes = entry(meter, external_id).metadata["decontamination"]["votes"]
        assert sorted(v["model"] for v in votes) == ["model-a", "model-b", "model-c"]
    contaminated = entry(meter, CONTAMINATED).metadata
    assert contaminated["stage"] == "discarded" and "model-b" in contaminated["discarded_because"]
    assert [v["vote"] for v in contaminated["decontamination"]["votes"] if v["model"] == "model-b"] == ["yes"]
    assert pipeline.stage_counts(meter) == {"verification": 3, "discarded": 1}

    # --- pair verification: three annotators; one rejection discards ---------------------------------
    def verify(item, annotator):
        rejects = item.group.external_id == REJECTED_IN_VERIFICATION and annotator == annotators[2]
        return ("reject" if rejects else "accept"), {}

    assert work_the_queue(meter, annotators, verify) == 9
    assert entry(meter, REJECTED_IN_VERIFICATION).metadata["stage"] == "discarded"
    assert pipeline.stage_counts(meter) == {"generation": 2, "discarded": 2}
    pair = Item.objects.get(external_id="meter-01-pair")
    assert pair.status == Item.Status.APPROVED and pair.decisions.get().curator is None

    # --- generation: one call per level, from the stem bank, on the fake model server -----------------
    job = job_create(project=meter, kind="meter_question", endpoint=models[0], enqueue=False)
    run_now(job)
    assert job.status == "succeeded" and job.done == 6 == LLMCall.objects.filter(job=job).count()
    questions = Item.objects.filter(project=meter, metadata__role="question").order_by("external_id")
    assert [q.external_id for q in questions] == [
        f"meter-0{n}-L{level}" for n in (1, 2) for level in (1, 2, 3)
    ]
    for question in questions:
        level = question.metadata["level"]
        assert question.metadata["stem"] in stem_bank("pt-BR")[level] and question.causal_class == level
        roles = {option.role: option for option in question.options.all()}
        assert sorted(roles) == sorted(["correct", "contradictory", "unfounded", "reversal", "irrelevant"])
        assert all(option.rationale for role, option in roles.items() if role != "correct")
        assert {role: option.position for role, option in roles.items()} == option_positions(
            key=question.external_id, seed=13
        )
        assert design_for(meter).item_warnings(question) == []
    generation_prompts = [r.prompt for r in fake_llm.completions if "Modelo de pergunta:" in r.prompt]
    assert all(
        any(
            stem in prompt
            for stem in stem_bank("pt-BR")["L1"] + stem_bank("pt-BR")["L2"] + stem_bank("pt-BR")["L3"]
        )
        for prompt in generation_prompts
    )
    assert pipeline.stage_counts(meter) == {"editing": 2, "discarded": 2}

    # --- editing (round 1): the first two edit, the third reviews; the majority keeps the final version --
    # --- filtering (round 2): five pass/fail criteria; an annotation passes when all do; majority decides -
    edited = "Por que a aeronave ultrapassou o fim da pista ao pousar no aeroporto de Londrina?"

    def edit_then_filter(item, annotator):
        if item.metadata["stage"] == "editing":
            if item.external_id == "meter-01-L1" and annotator == annotators[0]:
                item_edit(
                    item=item, user=annotator, part="question", values=edited, base_version=item.version
                )
            dissent = item.external_id == "meter-02-L2" and annotator == annotators[1]
            return ("reject" if dissent else "accept"), {}
        assert item.metadata["stage"] == "filtering"
        ratings = dict(PASS)
        if item.external_id == "meter-02-L2" and annotator == annotators[2]:
            ratings["fluency"] = 0  # one failing annotation: still kept, two of three pass
        return "accept", ratings

    assert work_the_queue(meter, annotators, edit_then_filter) == 36
    l1 = Item.objects.get(external_id="meter-01-L1")
    assert l1.question == edited and l1.round == 2 and l1.metadata["rounds"]["2"] == {"stage": "filtering"}
    assert l1.metadata["editing"]["editors"] == ["annotator1", "annotator2"]
    assert l1.metadata["editing"]["reviewer"] == "annotator3"
    assert Judgment.objects.get(item=l1, round=1, annotator=annotators[0]).edited
    kept = Item.objects.get(external_id="meter-02-L2")
    assert kept.metadata["filtering"] == {
        "passes": 2,
        "judgments": 3,
        "kept": True,
        "per_criterion": {**{key: 3 for key in PASS}, "fluency": 2},
    }
    assert pipeline.stage_counts(meter) == {"approval": 2, "discarded": 2}

    # --- approval: an entry is gold only when all three of its questions are ------------------------------
    for external_id in ("meter-01-L1", "meter-01-L2", "meter-01-L3", "meter-02-L1", "meter-02-L2"):
        item_close(item=Item.objects.get(external_id=external_id), curator=curator, decision="approve")
    assert pipeline.stage_counts(meter) == {"gold": 1, "approval": 1, "discarded": 2}
    page = client_for(curator).get(reverse("annotation:project_detail", args=[meter.slug])).content.decode()
    assert 'class="tile stage-gold"' in page and "Answer letters" in page and "contaminated" in page

    # --- agreement: Fleiss' kappa per stage, from the stage each round was ----------------------------
    sections = {s.key: s for s in project_agreement(meter, by="meta:stage", bootstrap=None)}
    assert {key: sections[key].n_judgments for key in ("verification", "editing", "filtering")} == {
        "verification": 9,
        "editing": 18,
        "filtering": 18,
    }
    vote_kappa = {
        key: next(r for r in sections[key].rows if r.criterion.key == "vote").summary.fleiss.value
        for key in ("verification", "editing", "filtering")
    }
    # Verification: two pairs accepted by all, one 2–1: P̄ = 7/9, Pe = 65/81, κ = −0.125.
    assert vote_kappa["verification"] == pytest.approx(-0.125)
    # Editing: five versions accepted by all, one 2–1: P̄ = 8/9, Pe = 290/324, κ = −2/34.
    assert vote_kappa["editing"] == pytest.approx(-2 / 34)
    agreement_page = client_for(curator).get(reverse("evaluation:agreement", args=[meter.slug]))
    assert '<option value="meta:stage" selected>' in agreement_page.content.decode()

    # --- release and export ----------------------------------------------------------------------------
    release = release_cut(project=meter, seed=5)
    released = release.items.order_by("split", "position")
    assert sorted(r.data["id"] for r in released) == ["meter-01-L1", "meter-01-L2", "meter-01-L3"]
    assert len({r.split for r in released}) == 1  # an entry is never split apart

    item_close(item=Item.objects.get(external_id="meter-02-L3"), curator=curator, decision="approve")
    assert pipeline.stage_counts(meter) == {"gold": 2, "discarded": 2}
    release = release_cut(project=meter, seed=5)
    assert release.items.count() == 6
    export_release(release, tmp_path / "out", ("jsonl",))
    rows = [
        json.loads(line)
        for split in ("train", "dev", "test")
        for line in (tmp_path / f"out/meter/{split}.jsonl").read_text().splitlines()
    ]
    assert sorted(row["id"] for row in rows) == ["meter-01", "meter-02"]
    first = next(row for row in rows if row["id"] == "meter-01")
    assert set(first) == {"id", "context", "L1", "L2", "L3"}
    assert first["L1"]["question"] == edited and set(first["L1"]["options"]) == set("ABCDE")
    correct = Item.objects.get(external_id="meter-01-L1").options.get(role="correct")
    assert first["L1"]["answer"] == correct.letter and first["L1"]["options"][correct.letter] == correct.text
    model_text = (tmp_path / "out/meter").joinpath("train.jsonl").read_text() + "".join(
        (tmp_path / f"out/meter/{s}.jsonl").read_text() for s in ("dev", "test")
    )
    assert "reversal" not in model_text and "rationale" not in model_text
    categories = [
        json.loads(line) for line in (tmp_path / "out/meter/categories.jsonl").read_text().splitlines()
    ]
    assert len(categories) == 2
    first_categories = next(row for row in categories if row["id"] == "meter-01")["L1"]
    assert first_categories["categories"][correct.letter] == "correct"
    assert sorted(first_categories["categories"].values()) == sorted(
        ["correct", "contradictory", "unfounded", "reversal", "irrelevant"]
    )
    checksums = (tmp_path / "out/checksums.txt").read_text()
    assert "meter/categories.jsonl" in checksums and "meter/train.jsonl" in checksums

    response = client_for(curator).get(
        reverse("evaluation:release_download", args=[meter.slug, release.version])
    )
    names = zipfile.ZipFile(io.BytesIO(b"".join(response.streaming_content))).namelist()
    assert f"meter-{release.tag}/meter/categories.jsonl" in names


def test_filtering_discards_a_question_most_annotators_fail_and_its_entry_with_it(meter, annotators):
    group = entry(meter, "meter-01")
    group.metadata = {**group.metadata, "stage": "generation"}
    group.save()
    spec = BY_CONTEXT[group.context]["questions"]
    for question in spec:
        options = {option["role"]: option for option in question["options"]}
        pipeline.question_create(
            entry=group,
            level=question["level"],
            question=question["question"],
            answer=options["correct"]["text"],
            distractors={
                role: {"text": o["text"], "rationale": o["rationale"]}
                for role, o in options.items()
                if role != "correct"
            },
            stem="",
            provenance={"model": "hand"},
        )
    failing = {"meter-01-L3": {annotators[0], annotators[1]}}

    def edit_then_filter(item, annotator):
        if item.metadata["stage"] == "editing":
            return "accept", {}
        fails = annotator in failing.get(item.external_id, ())
        return ("reject" if fails else "accept"), ({**PASS, "accuracy": 0} if fails else PASS)

    assert work_the_queue(meter, annotators, edit_then_filter) == 18
    l3 = Item.objects.get(external_id="meter-01-L3")
    assert l3.status == Item.Status.REJECTED and l3.metadata["filtering"]["kept"] is False
    assert entry(meter, "meter-01").metadata["stage"] == "discarded"
    assert pipeline.stage_counts(meter) == {"discarded": 1, "pair": 3}


def test_the_generation_page_and_the_api_start_meter_jobs(meter, models, curator, client_for):
    client = client_for(curator)
    page = client.get(reverse("generation:project", args=[meter.slug])).content.decode()
    assert 'id="start-decontamination"' in page and "4 cause–effect pairs wait for the check." in page
    response = client.post(
        reverse("generation:job_start", args=[meter.slug, "decontamination"]),
        {
            "decontamination-endpoint": models[0].pk,
            "decontamination-voters": [models[1].pk, models[2].pk],
        },
    )
    assert response.status_code == 302
    job = meter.generation_jobs.get()
    assert job.kind == "decontamination" and job.total == 12
    assert job.params["endpoint_ids"] == [m.pk for m in models]
    refused = client.post(
        reverse("generation:job_start", args=[meter.slug, "meter_question"]),
        {"meter_question-endpoint": models[0].pk},
    )
    assert refused.status_code == 400 and "no entry waits for meter_question" in refused.content.decode()

    api = client.post(
        f"/api/v1/projects/{meter.slug}/jobs/",
        {
            "kind": "decontamination",
            "endpoint": models[1].pk,
            "voters": [models[2].pk],
            "group_ids": [entry(meter, "meter-01").pk],
        },
        content_type="application/json",
    )
    assert api.status_code == 201, api.content
    assert api.json()["params"] == {
        "group_ids": [entry(meter, "meter-01").pk],
        "endpoint_ids": [models[1].pk, models[2].pk],
    }


def test_meter_jobs_are_refused_in_other_designs(project, endpoint):
    from generation.services import JobInvalid

    with pytest.raises(JobInvalid, match="for METER projects"):
        job_create(project=project, kind="decontamination", endpoint=endpoint, enqueue=False)


def test_the_annotator_page_asks_each_stage_for_its_own_judgment(meter, annotators, client_for):
    group = entry(meter, "meter-01")
    group.metadata = {**group.metadata, "stage": "verification"}
    group.save()
    pair = pipeline.pair_item_create(entry=group)
    client = client_for(annotators[0])
    response = client.post(reverse("annotation:queue_next", args=[meter.slug]))
    assignment_url = response["Location"]
    page = client.get(assignment_url).content.decode()
    assert 'data-meter-stage="verification"' in page and group.metadata["cause"] in page
    assert 'name="causal_class"' not in page and 'name="rating_fluency"' not in page
    judged = client.post(assignment_url + "judge/", {"vote": "accept"})
    assert judged.status_code == 302, judged.content.decode()
    assert Judgment.objects.get(item=pair).ratings == {}

    Item.objects.filter(pk=pair.pk).update(metadata={**pair.metadata, "stage": "filtering"})
    client = client_for(annotators[1])
    assignment_url = client.post(reverse("annotation:queue_next", args=[meter.slug]))["Location"]
    page = client.get(assignment_url).content.decode()
    assert all(f'name="rating_{key}"' in page for key in pipeline.FILTER_CRITERIA)
    refused = client.post(assignment_url + "judge/", {"vote": "accept"})
    assert refused.status_code == 400 and "Rate this criterion." in refused.content.decode()
