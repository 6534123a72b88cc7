"""BERTScore with the packaged model: identical texts score highest, related above unrelated, repeatably."""

import pytest

pytestmark = pytest.mark.ml


def test_bertscore_ranks_identical_above_paraphrase_above_unrelated_and_is_deterministic():
    pytest.importorskip("torch", reason="the ml extra is not installed")
    from evaluation.runs.bertscore import bertscore

    reference = "A chuva forte causou a enchente que destruiu as casas perto do rio."
    candidates = [
        reference,
        "As casas perto do rio foram destruídas pela enchente causada pela chuva forte.",
        "O gato dorme no sofá enquanto o sol entra pela janela.",
    ]
    scores = bertscore(candidates, [reference] * 3)
    identical, paraphrase, unrelated = (score.f1 for score in scores)
    assert identical == pytest.approx(1.0, abs=1e-5)
    assert identical > paraphrase > unrelated + 0.2
    assert all(0 <= score.precision <= 1.0001 and 0 <= score.recall <= 1.0001 for score in scores)
    again = bertscore(candidates, [reference] * 3)
    assert [score.f1 for score in again] == [score.f1 for score in scores]


def test_precision_and_recall_follow_the_candidate_and_the_reference():
    pytest.importorskip("torch", reason="the ml extra is not installed")
    from evaluation.runs.bertscore import bertscore

    short = "A chuva causou a enchente."
    long = "A chuva causou a enchente, e a enchente fechou as escolas e as estradas da cidade por uma semana."
    [score] = bertscore([short], [long])
    # every token of the short answer is in the long reference: high precision, lower recall
    assert score.precision > score.recall
