"""Closed-format figures on small hand-made data whose answers are known; reading letters and yes/no."""

import pytest

from evaluation.runs.choices import parse_choice, parse_yes_no, yes_no_gold
from evaluation.runs.metrics import (
    DifferenceError,
    accuracy_by,
    difference_values,
    error_distribution,
    group_accuracy,
    parse_differences,
)


def row(correct, *, group="", repetition=1, role="", unparsed=False, failed=False, n_options=2, **extra):
    return {
        "series": "m · zero-shot",
        "correct": correct,
        "group": group,
        "repetition": repetition,
        "role": role,
        "unparsed": unparsed,
        "failed": failed,
        "n_options": n_options,
        **extra,
    }


def test_group_accuracy_counts_only_groups_whose_every_question_is_right():
    rows = (
        [row(True, group="g1")] * 4  # all four right
        + [row(True, group="g2")] * 3
        + [row(False, group="g2")]  # one wrong
        + [
            row(True, group="g3"),
            row(False, group="g3", unparsed=True),
            row(True, group="g3"),
            row(True, group="g3"),
        ]
        + [row(True)]  # no group: left out of group accuracy
    )
    [line] = group_accuracy(rows, ["series"])
    assert (line["groups"], line["groups_correct"]) == (3, 1)
    assert line["group_accuracy"] == pytest.approx(1 / 3)
    assert line["question_accuracy"] == pytest.approx(10 / 12)
    assert line["group_chance"] == pytest.approx(1 / 16) and line["question_chance"] == 0.5


def test_group_accuracy_takes_each_repetition_as_its_own_attempt():
    rows = [row(True, group="g1", repetition=1)] * 2 + [
        row(True, group="g1", repetition=2),
        row(False, group="g1", repetition=2),
    ]
    [line] = group_accuracy(rows, ["series"])
    assert (line["groups"], line["groups_correct"]) == (2, 1)


def test_errors_are_distributed_by_the_role_of_the_chosen_distractor():
    rows = (
        [row(True, n_options=5)] * 5
        + [row(False, role="irrelevant", n_options=5)] * 3
        + [row(False, role="reversal", n_options=5)]
        + [row(False, unparsed=True, n_options=5), row(False, failed=True, n_options=5)]
    )
    [line] = error_distribution(rows, ["series"])
    assert line["wrong"] == 6
    assert (line["irrelevant"], line["reversal"], line["contradictory"], line["unfounded"]) == (3, 1, 0, 0)
    assert line["irrelevant_share"] == pytest.approx(0.75) and line["reversal_share"] == pytest.approx(0.25)
    assert (line["unparsed"], line["failed"]) == (1, 1)
    [overall] = accuracy_by(rows, ["series"])
    assert overall["accuracy"] == pytest.approx(5 / 11) and overall["chance"] == pytest.approx(0.2)


def cell_rows(task, variant, right, wrong):
    return [row(True, task=task, variant=variant)] * right + [row(False, task=task, variant=variant)] * wrong


def test_the_challenge_differences_of_causalitycheck_from_task_accuracies():
    rows = (
        cell_rows("AJ", "v1", 9, 1)
        + cell_rows("PJ", "v1", 5, 5)  # Acc(AJ)=.9, Acc(PJ)=.5
        + cell_rows("VCR", "v1", 3, 7)  # .3
        + cell_rows("PS", "v1", 6, 4)
        + cell_rows("PU", "v1", 8, 2)
        + cell_rows("ID", "v1", 4, 6)
    )  # .6 .8 .4
    definitions = parse_differences("Challenge 1 = Acc(AJ) - Acc(PJ)\nChallenge 2 = VCR - mean(PS, PU, ID)")
    values = {line["difference"]: line for line in difference_values(rows, definitions, ["series"])}
    assert values["Challenge 1"]["value"] == pytest.approx(0.4)
    assert values["Challenge 2"]["value"] == pytest.approx(0.3 - 0.6)
    others = parse_differences("Against the rest = VCR - mean(others)")
    [line] = difference_values(rows, others, ["series"])
    assert line["right"] == pytest.approx((0.9 + 0.5 + 0.6 + 0.8 + 0.4) / 5)


def test_a_difference_may_name_a_variant_or_a_cell_and_says_what_it_could_not_find():
    rows = (
        cell_rows("AJ", "original", 4, 0)
        + cell_rows("AJ", "negated", 1, 3)
        + cell_rows("PJ", "negated", 2, 2)
    )
    definitions = parse_differences(
        "Negation = original - negated; Cell = AJ/negated - PJ/negated; Gone = XX - AJ"
    )
    values = {line["difference"]: line for line in difference_values(rows, definitions, ["series"])}
    assert values["Negation"]["value"] == pytest.approx(1.0 - 3 / 8)
    assert values["Cell"]["value"] == pytest.approx(0.25 - 0.5)
    assert values["Gone"]["value"] is None and values["Gone"]["missing"] == "XX"


def test_a_difference_that_cannot_be_read_names_its_line():
    with pytest.raises(DifferenceError, match="line 2"):
        parse_differences("Fine = A - B\nBroken A minus B")


@pytest.mark.parametrize(
    "answer, reasoning, expected",
    [
        ("B", "", "B"),
        ("(c)", "", "C"),
        ("D) porque a chuva causou", "", "D"),
        ("The answer is E.", "", "E"),
        ("Resposta: A", "", "A"),
        ("**B**", "", "B"),
        ("a resposta é a letra c", "", "C"),
        ("Portanto, a resposta é D.", "A parece plausível, B não.", "D"),
        ("I first thought A, but the answer is C", "", "C"),
        ("x", "A seems right, yet the final answer is B", "B"),
        ("não sei", "", None),
        ("A or B", "", None),
        ("F", "", None),
        ("", "", None),
    ],
)
def test_the_chosen_letter_is_read_also_after_reasoning(answer, reasoning, expected):
    assert parse_choice(answer, list("ABCDE"), reasoning) == expected


@pytest.mark.parametrize(
    "answer, expected",
    [
        ("Sim.", "yes"),
        ("não", "no"),
        ("NAO, porque", "no"),
        ("yes", "yes"),
        ("No.", "no"),
        ("A resposta é sim", "yes"),
        ("talvez", None),
        ("", None),
    ],
)
def test_yes_and_no_are_read_in_portuguese_and_english(answer, expected):
    assert parse_yes_no(answer) == expected


def test_the_gold_answer_of_a_yes_no_item_is_its_correct_option_else_its_reference():
    assert (
        yes_no_gold({"options": [{"letter": "A", "text": "Sim", "role": "correct"}], "answer": ""}) == "yes"
    )
    assert yes_no_gold({"options": [], "answer": "Não."}) == "no"


def test_group_accuracy_leaves_out_a_group_with_a_missing_question_and_says_so():
    """CausalBench: g1 all four right, g2 three right and one wrong, g3 only three questions (all right). Counting
    g3 would give 2 of 3 groups with a chance of (1/16 + 1/16 + 1/8) / 3; whole groups give 1 of 2, chance 1/16."""
    rows = (
        [row(True, group="g1")] * 4
        + [row(True, group="g2")] * 3
        + [row(False, group="g2")]
        + [row(True, group="g3")] * 3
    )
    [line] = group_accuracy(rows, ["series"], group_size=4)
    assert (line["groups"], line["groups_correct"]) == (2, 1)
    assert line["group_accuracy"] == 0.5
    assert line["group_chance"] == 1 / 16
    assert line["groups_left_out"] == 1 and "fewer than 4 questions: g3" in line["left_out_reason"]
    assert line["question_accuracy"] == pytest.approx(10 / 11)


def test_without_a_design_size_a_whole_group_has_as_many_questions_as_the_largest():
    rows = [row(True, group="g1")] * 4 + [row(True, group="g3")] * 3
    [line] = group_accuracy(rows, ["series"])
    assert (line["groups"], line["group_size"], line["groups_left_out"]) == (1, 4, 1)
