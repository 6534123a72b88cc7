"""Per-item agreement figures, checked against hand-counted examples."""

import pytest

from annotation.agreement import item_agreement, majority, pairwise_agreement

CRITERIA = [
    {"key": "adherence", "label": "Adherence", "min": 1, "max": 5},
    {"key": "fluency", "label": "Fluency", "min": 1, "max": 5},
]


def test_pairwise_agreement_counts_agreeing_pairs():
    assert pairwise_agreement(["a", "a", "a"]) == 1
    assert pairwise_agreement(["a", "a", "b"]) == pytest.approx(1 / 3)  # 1 of 3 pairs
    assert pairwise_agreement(["a", "b", "c"]) == 0
    assert pairwise_agreement(["a", "a", "b", "b"]) == pytest.approx(2 / 6)
    assert pairwise_agreement(["a"]) is None and pairwise_agreement(["a", ""]) is None


def test_a_majority_needs_more_than_half():
    assert majority(["accept", "accept", "reject"]) == "accept"
    assert majority(["accept", "reject"]) is None
    assert majority(["accept", "reject", "needs_revision"]) is None
    assert majority([]) is None


def test_an_items_round_is_summed_up():
    judgments = [
        {"ratings": {"adherence": 5, "fluency": 4}, "vote": "accept", "causal_class": "associational"},
        {"ratings": {"adherence": 3, "fluency": 4}, "vote": "accept", "causal_class": "associational"},
        {"ratings": {"adherence": 1, "fluency": 4}, "vote": "reject", "causal_class": "interventional"},
    ]
    summary = item_agreement(judgments, CRITERIA)

    assert summary.majority_vote == "accept" and summary.majority_class == "associational"
    assert summary.mean_ratings == {"adherence": 3, "fluency": 4}
    adherence, fluency = summary.criteria
    assert (adherence.range, adherence.relative_range, fluency.range) == (4, 1.0, 0)
    # disagreement = mean(1 - 1/3 votes, 1 - 1/3 classes, mean(1.0, 0.0) ratings)
    assert summary.disagreement == pytest.approx(((2 / 3) + (2 / 3) + 0.5) / 3, abs=1e-4)


def test_perfect_agreement_is_zero_disagreement_and_a_single_judgment_too():
    same = {"ratings": {"adherence": 4, "fluency": 4}, "vote": "accept", "causal_class": "associational"}
    assert item_agreement([same, same, same], CRITERIA).disagreement == 0
    assert item_agreement([same], CRITERIA).disagreement == 0
