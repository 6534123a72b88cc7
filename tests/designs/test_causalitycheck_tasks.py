"""CausalityCheck's tasks asked as their own questions, and its scores as means of units (paper §3, Tables 1–2)."""

import json
from fractions import Fraction

import pytest

from annotation.designs import design_for
from evaluation.runs.conditions import question_of
from evaluation.runs.metrics import difference_values, parse_differences, unit_scores

SEED_OPTIONS = [
    {"letter": letter, "text": text, "role": "correct" if letter == "B" else "other"}
    for letter, text in zip("ABCD", ["A chuva parou.", "A barragem rompeu.", "O sol nasceu.", "Nada."])
]


def record(task: str, label: str, answer: str = "", variant: str = "ps") -> dict:
    return {
        "question": "Por que a cidade alagou?",
        "context": "A barragem rompeu de madrugada.",
        "answer": answer,
        "causal_class": label,
        "options": SEED_OPTIONS,
        "correct_option": "B",
        "metadata": json.dumps({"design": "causalitycheck", "task": task, "variant": variant}),
    }


@pytest.mark.parametrize("variant", ["ps", "pu", "id", "vcr"])
def test_each_task_has_its_own_question_options_gold_and_chance_in_every_variant(variant):
    design = design_for("causalitycheck")
    original = question_of(record("op", "B", variant=variant), design, "pt-BR")
    assert original["own"] is False and original["correct"] == {"B"} and len(original["options"]) == 4

    answerable = question_of(record("aj", "answerable", variant=variant), design, "en")
    unanswerable = question_of(record("aj", "unanswerable", variant=variant), design, "en")
    assert "everything needed to answer" in answerable["question"]
    assert [len(answerable["options"]), answerable["correct"], unanswerable["correct"]] == [2, {"A"}, {"B"}]

    chain = question_of(
        record("pj", "invalid_chain", "chuva → barragem → alagamento", variant), design, "pt-BR"
    )
    assert "chuva → barragem → alagamento" in chain["question"]
    assert len(chain["options"]) == 2 and chain["correct"] == {"B"}

    verdict = question_of(
        record("cva", "incorrect_but_prone_to_correctness", "Alagou por causa do sol.", variant), design, "en"
    )
    assert [option["text"] for option in verdict["options"]] == [
        "Correct and reliable",
        "Correct but prone to error",
        "Incorrect but prone to correctness",
        "Incorrect and unreliable",
    ]
    assert verdict["correct"] == {"C"} and "Alagou por causa do sol." in verdict["question"]


def rows(task, variant, right, wrong, n_options):
    base = {
        "series": "m · few-shot",
        "task": task,
        "variant": variant,
        "n_options": n_options,
        "unparsed": False,
        "failed": False,
    }
    return [{**base, "correct": True}] * right + [{**base, "correct": False}] * wrong


# Unequal cells, stored in lower case as the design stores them: CVA has four times the items.
CELLS = (
    rows("aj", "ps", 2, 0, 2)
    + rows("aj", "vcr", 1, 1, 2)  # 1.0, 0.5 → AJ 0.75
    + rows("pj", "ps", 1, 1, 2)
    + rows("pj", "vcr", 1, 3, 2)  # 0.5, 0.25 → PJ 0.375
    + rows("cva", "ps", 1, 7, 4)
    + rows("cva", "vcr", 4, 4, 4)
)  # 0.125, 0.5 → CVA 0.3125


def test_scores_are_means_of_cells_as_table_1_says():
    """By hand: All = (1 + .5 + .5 + .25 + .125 + .5) / 6 = 0.47917, which is also the mean of the three task
    scores (.75 + .375 + .3125) / 3 and of the two variant scores PS (1 + .5 + .125) / 3 = .54167 and
    VCR (.5 + .25 + .5) / 3 = .41667. Pooled, the 26 answers would give 10 / 26 = 0.3846."""
    [line] = unit_scores(CELLS, ["series"])
    assert line["All"] == pytest.approx(float(Fraction(23, 48)), abs=1e-12)
    assert line["task:aj"] == 0.75 and line["task:pj"] == 0.375 and line["task:cva"] == 0.3125
    assert line["variant:ps"] == pytest.approx(13 / 24) and line["variant:vcr"] == pytest.approx(5 / 12)
    assert line["All"] == pytest.approx((0.75 + 0.375 + 0.3125) / 3)
    assert line["task:aj:chance"] == 0.5 and line["task:cva:chance"] == 0.25
    assert line["All_chance"] == pytest.approx((4 * 0.5 + 2 * 0.25) / 6)


def test_the_challenges_find_their_terms_in_any_case_and_show_each_term():
    """Challenge 1 = AJ − PJ = .75 − .375 = .375 (pooled: 3/4 − 2/6 = .4167). Challenge 2 = VCR − mean(PS):
    .41667 − .54167 = −.125 (pooled: 6/14 − 4/12 = .0952)."""
    for text in (
        "Challenge 1 = AJ - PJ\nChallenge 2 = Acc(VCR) - mean(PS)",
        "Challenge 1 = aj - pj\nChallenge 2 = acc(vcr) - mean(ps)",
    ):
        values = {
            line["difference"]: line for line in difference_values(CELLS, parse_differences(text), ["series"])
        }
        assert values["Challenge 1"]["value"] == pytest.approx(0.375)
        assert values["Challenge 2"]["value"] == pytest.approx(-0.125)
        assert values["Challenge 1"]["missing"] == ""
        assert "= 0.7500 (4 answers)" in values["Challenge 1"]["terms"]
        assert "= 0.3750 (6 answers)" in values["Challenge 1"]["terms"]
        assert "(12 answers)" in values["Challenge 2"]["terms"]  # PS: 2 + 2 + 8
