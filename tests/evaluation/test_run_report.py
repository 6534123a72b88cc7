"""The report of an open-answer run reproduces the paper's figures, and measures the judge against people."""

import re

import pytest

from evaluation.models import EvalResponse
from evaluation.runs.report import report_tables
from evaluation.runs.services import run_create
from tests.evaluation.helpers import judge
from tests.evaluation.runs import open_items, release_of, run_here, second_endpoint
from tests.fake_llm import Reply

pytestmark = pytest.mark.django_db
CRITERIA = ("adherence", "fluency", "coherence", "relevance")


def scores_reply(adherence: int, rest: int = 3) -> Reply:
    scores = {key: rest for key in CRITERIA}
    scores["adherence"] = adherence
    return Reply.json({"scores": scores, "justifications": {key: "curta" for key in CRITERIA}})


@pytest.fixture
def judged_run(project, endpoint, fake_llm, annotators):
    items = open_items(project, 9)
    for index, item in enumerate(items):
        for annotator in annotators:
            judge(
                item,
                annotator,
                ratings={"adherence": index % 5 + 1, "fluency": 4, "coherence": 4, "relevance": 4},
            )
    release = release_of(project, ratios=(0.34, 0.0, 0.66))
    run = run_create(
        project=project,
        release=release,
        endpoints=[endpoint, second_endpoint(endpoint)],
        judge_endpoint=endpoint,
        enqueue=False,
    )

    def responder(received):
        prompt = received.prompt
        if "Dê uma nota" in prompt:
            reference = re.search(r"Resposta a avaliar:\nPorque a causa (\d+) age\.", prompt)
            if reference:  # the judge agrees with the annotators on the reference answers' adherence
                return scores_reply(int(reference.group(1)) % 5 + 1)
            return scores_reply(5 if "class-informed" in prompt else 2)
        if "Ordene" in prompt:
            return Reply.json({"ranking": ["A", "B", "C"], "justification": "a primeira"})
        if "classe causal" in prompt:
            return Reply.json({"answer": "Porque a causa age: class-informed."})
        return Reply.json({"answer": "Uma resposta sem a classe."})

    fake_llm.responder = responder
    run_here(run)
    return run


def test_the_report_has_the_papers_figures_with_their_numbers(judged_run):
    tables = {table.key: table for table in report_tables([judged_run])}
    assert {
        "bertscore",
        "judge_scores",
        "reference_scores",
        "rankings",
        "position_bias",
        "judge_vs_people",
    } <= set(tables)
    # Figure 5: the judge's means per class × model × condition
    informed = [row for row in tables["judge_scores"].rows if row["series"].endswith("class-informed")]
    agnostic = [row for row in tables["judge_scores"].rows if row["series"].endswith("class-agnostic")]
    assert informed and all(row["adherence"] == 5 for row in informed)
    assert agnostic and all(row["adherence"] == 2 for row in agnostic)
    # Figure 4: references by who wrote them (open_items alternates human and model answers)
    assert {row["answer_by"] for row in tables["reference_scores"].rows} == {"human", "model"}
    # Figure 6: the judge always ranks the answer shown first as best, so each source is best as often as shown first
    bias = [row for row in tables["position_bias"].rows if row["position"] == 1]
    assert all(row["share"] == 1.0 for row in bias)
    first = {(row["model"], row["source"]): row["place_1"] for row in tables["rankings"].rows}
    assert sum(first.values()) == sum(row["n"] for row in bias)
    # Figure 3: BERTScore per class × model × condition, when the ml extra is there
    if EvalResponse.objects.filter(run=judged_run, bertscore_f1__isnull=False).exists():
        assert all(0 <= row["bertscore_f1"] <= 1 for row in tables["bertscore"].rows)
    else:
        assert "BERTScore not computed" in judged_run.notes
    for table in tables.values():
        csv_text = table.csv()
        assert csv_text.splitlines()[0] == ",".join(key for key, _label in table.columns)
        assert len(csv_text.splitlines()) == len(table.rows) + 1
    assert "<svg" in tables["judge_scores"].plot and "<svg" in tables["rankings"].plot


def test_the_judge_is_measured_against_the_annotators_majority(judged_run):
    [table] = [table for table in report_tables([judged_run]) if table.key == "judge_vs_people"]
    by_criterion = {row["criterion"]: row for row in table.rows}
    n_test = judged_run.release.items.filter(split="test").count()
    assert by_criterion["adherence"]["items"] == n_test
    assert (
        by_criterion["adherence"]["alpha"] == pytest.approx(1.0) and by_criterion["adherence"]["exact"] == 1.0
    )
    # people said 4 for fluency, the judge 3: no agreement beyond chance, and the table says so
    assert by_criterion["fluency"]["exact"] == 0.0
    assert by_criterion["fluency"]["alpha"] is None or by_criterion["fluency"]["alpha"] < 0.5


def test_runs_are_compared_side_by_side_with_the_run_in_each_series(judged_run, project, endpoint, fake_llm):
    second = run_create(
        project=project,
        release=judged_run.release,
        endpoints=[endpoint],
        conditions=["class-agnostic"],
        enqueue=False,
    )
    run_here(second)
    tables = {table.key: table for table in report_tables([judged_run, second])}
    series = (
        {row["series"] for row in tables["bertscore"].rows}
        if "bertscore" in tables
        else {row["series"] for row in tables["judge_scores"].rows}
    )
    assert any(name.startswith(f"#{judged_run.pk} ") for name in series)
    assert any(name.startswith(f"#{second.pk} ") for name in series) or "bertscore" not in tables
