"""Closed-format runs end to end against the fake model server: multiple choice under zero-shot, few-shot and
chain of thought, yes/no groups; the letters read, errors by distractor role, group accuracy."""

import re

import pytest

from evaluation.models import EvalResponse, EvalRun
from evaluation.runs.report import report_tables
from evaluation.runs.services import run_create
from tests.evaluation.runs import asked, mc_items, release_of, run_here, yes_no_items
from tests.fake_llm import Reply

pytestmark = pytest.mark.django_db


def option_letter(prompt: str, role: str) -> str:
    return re.search(rf"^([A-E])\) {role} do caso", prompt, re.MULTILINE).group(1)


def test_multiple_choice_under_three_conditions_reads_letters_and_counts_errors_by_role(
    project, endpoint, fake_llm
):
    mc_items(project, 12)
    release = release_of(project)
    run = run_create(
        project=project,
        release=release,
        endpoints=[endpoint],
        conditions=["zero-shot", "few-shot", "chain-of-thought"],
        few_shot=2,
        differences="Challenge 1 = Acc(AJ) - Acc(PJ)",
        enqueue=False,
    )

    def responder(received):
        prompt = received.messages[-1]["content"]
        number = int(re.search(r"caso (\d+)\?", prompt).group(1))
        if "step by step" in prompt or "passo a passo" in prompt:
            # chain of thought: reasoning that names other letters first, then the right one in prose
            right = option_letter(prompt, "correct")
            return Reply.json(
                {"reasoning": "A parece plausível, B não.", "answer": f"Portanto, a resposta é {right}."}
            )
        if number % 4 == 0:
            return Reply.json({"answer": "não sei"})  # unreadable: wrong, counted apart
        if number % 4 == 1:
            return Reply.json({"answer": f"({option_letter(prompt, 'reversal')})"})  # a causal reversal
        return Reply.json({"answer": option_letter(prompt, "correct")})

    fake_llm.responder = responder
    run_here(run)

    assert run.status == EvalRun.Status.SUCCEEDED, run.error
    cot = EvalResponse.objects.filter(run=run, condition="chain-of-thought")
    assert cot.exists() and all(r.correct for r in cot)
    zero = EvalResponse.objects.filter(run=run, condition="zero-shot")
    for response in zero:
        number = int(re.search(r"caso (\d+)\?", response.release_item.data["question"]).group(1))
        assert response.correct is (number % 4 >= 2)
        assert response.unparsed is (number % 4 == 0)
    # few-shot prompts carry solved examples from the train split, never the item itself
    few = [r for r in fake_llm.requests if "Exemplos resolvidos" in r.messages[-1]["content"]]
    assert len(few) == EvalResponse.objects.filter(run=run, condition="few-shot").count()
    train_questions = set(release.items.filter(split="train").values_list("data__question", flat=True))
    for received in few:
        shown = set(re.findall(r"(Qual opção explica o caso \d+\?)", received.messages[-1]["content"]))
        assert len(shown & train_questions) == 2 and asked(received) not in (shown & train_questions)

    tables = {table.key: table for table in report_tables([run])}
    [zero_errors] = [row for row in tables["errors"].rows if row["series"].endswith("zero-shot")]
    n_reversal = sum(1 for r in zero if r.release_item.data["question"] and not r.correct and not r.unparsed)
    assert zero_errors["reversal"] == n_reversal and zero_errors["reversal_share"] == 1.0
    assert zero_errors["unparsed"] == zero.filter(unparsed=True).count()
    [zero_accuracy] = [row for row in tables["accuracy"].rows if row["series"].endswith("zero-shot")]
    assert zero_accuracy["chance"] == pytest.approx(0.2)
    assert zero_accuracy["accuracy"] == pytest.approx(zero.filter(correct=True).count() / zero.count())
    levels = {row["level"] for row in tables["accuracy_by_level"].rows}
    assert levels <= {"1", "2", "3"} and levels
    assert "<svg" in tables["accuracy_by_level"].plot
    assert 'class="error-bar"' in tables["accuracy"].plot, (
        "the zero-shot bar (right and wrong) has its interval"
    )

    # the task × variant cells and the curator's difference, from the items' metadata
    def accuracy(task, variant=None):
        chosen = [
            r
            for r in zero
            if r.release_item.data["metadata"].count(f'"task": "{task}"')
            and (variant is None or f'"variant": "{variant}"' in r.release_item.data["metadata"])
        ]
        return sum(r.correct for r in chosen) / len(chosen)

    cells = {
        (row["task"], row["variant"]): row["accuracy"]
        for row in tables["cells"].rows
        if row["series"].endswith("zero-shot")
    }
    assert cells[("AJ", "original")] == pytest.approx(accuracy("AJ", "original"))
    assert "<svg" in tables["cells"].plot
    [challenge] = [row for row in tables["differences"].rows if row["series"].endswith("zero-shot")]

    def task_score(task):  # a mean of its cells, as CausalityCheck's Table 1 scores tasks
        # the cells the run's split holds: the seeded split may leave a cell without an item
        scores = [
            accuracy(task, variant)
            for variant in ("original", "negated")
            if cells.get((task, variant)) is not None
        ]
        assert scores, f"no cell of {task} in the run"
        return sum(scores) / len(scores)

    assert challenge["value"] == pytest.approx(task_score("AJ") - task_score("PJ"))


def test_yes_no_groups_give_group_accuracy_and_accuracy_per_type(project, endpoint, fake_llm):
    yes_no_items(project, groups=6)
    release = release_of(project, ratios=(0.5, 0.0, 0.5))
    run = run_create(
        project=project,
        release=release,
        endpoints=[endpoint],
        conditions=["zero-shot", "chain-of-thought"],
        enqueue=False,
    )

    def responder(received):
        question = asked(received)
        scenario, k = map(int, re.search(r"cenário (\d+), a pergunta (\d+)", question).groups())
        right = "Sim." if k % 2 else "Não."
        wrong = "Não." if k % 2 else "Sim."
        if "passo a passo" in received.messages[-1]["content"]:  # chain of thought: always right
            return Reply.json({"reasoning": "Pensando nas causas e nos efeitos.", "answer": right})
        # in even scenarios every answer is right; in odd ones the counterfactual question (k=3) is missed
        return Reply.json({"answer": wrong if scenario % 2 and k == 3 else right})

    fake_llm.responder = responder
    run_here(run)

    assert run.status == EvalRun.Status.SUCCEEDED, run.error
    tables = {table.key: table for table in report_tables([run])}
    groups = {row["series"].rsplit(" · ", 1)[-1]: row for row in tables["group_accuracy"].rows}
    test_groups = {
        data["group"] for data in release.items.filter(split="test").values_list("data", flat=True)
    }
    even = {g for g in test_groups if int(g.split("-")[1]) % 2 == 0}
    zero = groups["zero-shot"]
    assert zero["groups"] == len(test_groups) and zero["groups_correct"] == len(even)
    assert zero["group_chance"] == pytest.approx(1 / 16) and zero["question_chance"] == pytest.approx(0.5)
    assert groups["chain-of-thought"]["group_accuracy"] == 1.0
    by_type = {
        row["type"]: row["accuracy"]
        for row in tables["accuracy_by_type"].rows
        if row["series"].endswith("zero-shot")
    }
    assert by_type["cause-to-effect"] == 1.0
    assert by_type["counterfactual"] == pytest.approx(len(even) / len(test_groups))
    assert "errors" not in tables  # no distractors to tell apart in yes/no
