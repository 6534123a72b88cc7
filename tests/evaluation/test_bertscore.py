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


def test_bfloat16_and_float32_give_the_same_scores_within_the_reference_tolerance(monkeypatch):
    """The fast path (bfloat16 where the CPU computes it) against float32, on short, long and windowed texts,
    with and without idf; and on one thread (a busy machine) as on several."""
    torch = pytest.importorskip("torch", reason="the ml extra is not installed")
    from evaluation.runs import bertscore as module
    from evaluation.runs.bertscore import bertscore, idf_weights, scorer

    sentence = "A chuva forte do dia {n} causou a enchente que fechou a escola do bairro por uma semana."
    candidates = [sentence.format(n=n) * (1 + 7 * (n % 3)) for n in range(12)] + ["Sim."]
    references = [sentence.format(n=n + 1) * (1 + 40 * (n % 4 == 3)) for n in range(12)] + ["Não."]
    slow, fast = scorer(precision="float32"), scorer(precision="bfloat16")
    assert fast.described(idf=False)["precision"] == "bfloat16"
    assert slow.windowed(references) > 0  # some texts are read in windows
    for idf in (None, idf_weights(slow, references)):
        exact = bertscore(candidates, references, model=slow, idf=idf)
        quick = bertscore(candidates, references, model=fast, idf=idf)
        for a, b in zip(exact, quick):
            assert abs(a.precision - b.precision) < 0.005 and abs(a.recall - b.recall) < 0.005
            assert abs(a.f1 - b.f1) < 0.005
    threads = torch.get_num_threads()
    several = bertscore(candidates, references, model=slow)
    monkeypatch.setattr(module, "_forward_threads", lambda: 1)  # as on a machine busier than its cores
    one = bertscore(candidates, references, model=slow)
    assert torch.get_num_threads() == threads  # the setting is given back
    for a, b in zip(several, one):
        assert a.f1 == pytest.approx(b.f1, abs=1e-5)
