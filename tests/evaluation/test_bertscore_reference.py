"""BERTScore equals the reference ``bert-score`` package's (same model, same layer) on 300 pairs of our own,
with and without idf; texts longer than the window are read whole; empty text scores 0."""

import itertools
import random

import pytest

from evaluation.runs.bertscore import owner_of_each_token, windows

pytestmark = pytest.mark.ml

SUBJECTS_PT = [
    "A chuva forte",
    "O aumento dos juros",
    "A falta de sono",
    "O desmatamento da floresta",
    "A vacinação em massa",
    "O preço alto do combustível",
    "A seca prolongada",
    "O uso de celular à noite",
]
EFFECTS_PT = [
    "causou a enchente que destruiu as casas perto do rio",
    "reduziu o consumo das famílias",
    "prejudicou a memória dos estudantes",
    "diminuiu as chuvas na região",
    "fez cair o número de internações",
    "encareceu o transporte dos alimentos",
    "levou à perda da colheita de milho",
    "atrasou o sono dos adolescentes",
]
SUBJECTS_EN = [
    "Heavy rain",
    "The rise in interest rates",
    "Lack of sleep",
    "Deforestation",
    "Mass vaccination",
    "The high price of fuel",
    "A long drought",
    "Using a phone at night",
]
EFFECTS_EN = [
    "caused the flood that destroyed the houses by the river",
    "cut household spending",
    "hurt the students' memory",
    "reduced rainfall in the region",
    "brought hospital admissions down",
    "made food transport more expensive",
    "led to the loss of the maize harvest",
    "delayed teenagers' sleep",
]
TAILS = [
    "",
    " ao longo de vários meses",
    " segundo os pesquisadores",
    ", o que surpreendeu a todos",
    " over several months",
    " according to the researchers",
]


def our_pairs(n=300, seed=7) -> list[tuple[str, str]]:
    """Candidate/reference pairs: paraphrases, swapped causes, unrelated answers, one-word and long ones."""
    rng = random.Random(seed)
    sentences = [f"{s} {e}{rng.choice(TAILS)}." for s, e in itertools.product(SUBJECTS_PT, EFFECTS_PT)]
    sentences += [f"{s} {e}{rng.choice(TAILS)}." for s, e in itertools.product(SUBJECTS_EN, EFFECTS_EN)]
    pairs = []
    while len(pairs) < n:
        reference = rng.choice(sentences)
        kind = len(pairs) % 5
        if kind == 0:
            candidate = reference
        elif kind == 1:
            candidate = rng.choice(sentences)
        elif kind == 2:
            candidate = reference.split()[0] + "."
        elif kind == 3:
            candidate = " ".join(rng.sample(sentences, 6))
        else:
            candidate = reference.replace(".", "") + ", " + rng.choice(sentences).lower()
        pairs.append((candidate, reference))
    return pairs


@pytest.fixture(scope="module")
def model():
    pytest.importorskip("torch", reason="the ml extra is not installed")
    from evaluation.runs.bertscore import scorer

    return scorer()


@pytest.fixture(scope="module")
def reference_package(model, tmp_path_factory):
    bert_score = pytest.importorskip("bert_score", reason="the reference bert-score package is not installed")
    from generation.local_models import default_model_dir

    # The package loads any model whose name contains "t5" as a T5 encoder, and the model's directory is
    # named by where the checkout is (a clone in /tmp/t5 scored against random weights): it is given the
    # same directory by a link whose path says nothing of the kind.
    model_dir = tmp_path_factory.mktemp("reference") / "model"
    model_dir.symlink_to(default_model_dir(), target_is_directory=True)
    assert "t5" not in str(model_dir).lower(), f"the reference package would read {model_dir} as a T5 model"

    def score(candidates, references, idf):
        _p, _r, f1 = bert_score.score(
            candidates,
            references,
            model_type=str(model_dir),
            num_layers=model.layer,
            idf=idf,
            batch_size=64,
        )
        return f1.tolist()

    return score


@pytest.mark.parametrize("idf", [False, True], ids=["without idf", "with idf"])
def test_f1_is_within_0_005_of_the_reference_package_on_every_pair_that_fits_the_window(
    model, reference_package, idf
):
    from evaluation.runs.bertscore import bertscore, idf_weights

    pairs = our_pairs()
    candidates, references = [c for c, _r in pairs], [r for _c, r in pairs]
    assert model.windowed(candidates + references) == 0, "every pair of this test fits the window"

    ours = bertscore(candidates, references, model=model, idf=idf_weights(model, references) if idf else None)
    theirs = reference_package(candidates, references, idf)

    worst = max(range(len(pairs)), key=lambda i: abs(ours[i].f1 - theirs[i]))
    assert abs(ours[worst].f1 - theirs[worst]) <= 0.005, (pairs[worst], ours[worst].f1, theirs[worst])


def test_two_long_texts_that_differ_after_the_first_window_do_not_score_1(model):
    from evaluation.runs.bertscore import bertscore

    start = " ".join(f"{s} {e}." for s, e in zip(SUBJECTS_PT * 8, EFFECTS_PT * 8))
    first = start + " No fim, a cidade reconstruiu as pontes e as escolas com ajuda do governo."
    second = start + " The cat slept on the warm sofa while the radio played old songs all afternoon."
    assert model.windowed([first, second]) == 2

    [score] = bertscore([first], [second], model=model)
    [same] = bertscore([first], [first], model=model)

    assert same.f1 == pytest.approx(1.0, abs=1e-5)
    assert score.f1 < 0.99


@pytest.mark.parametrize("blank", ["", "   ", "\n\t"])
def test_empty_or_blank_text_scores_0(model, blank):
    from evaluation.runs.bertscore import bertscore

    scores = bertscore(
        [blank, "A chuva causou a enchente."], ["A chuva causou a enchente.", blank], model=model
    )

    assert [(s.precision, s.recall, s.f1) for s in scores] == [(0.0, 0.0, 0.0), (0.0, 0.0, 0.0)]


@pytest.mark.parametrize("length,size", [(5, 510), (510, 510), (511, 510), (1500, 510), (2000, 100)])
def test_windows_cover_every_token_once_each_from_a_window_that_holds_it(length, size):
    spans = windows(length, size)
    owners = owner_of_each_token(length, spans)

    assert spans[0][0] == 0 and spans[-1][1] == length
    assert all(end - start <= size for start, end in spans)
    assert len(owners) == length
    assert all(spans[owners[p]][0] <= p < spans[owners[p]][1] for p in range(length))
