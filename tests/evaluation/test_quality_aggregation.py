"""Label aggregation with annotator models: the same answers as crowd-kit, and the invariants every method keeps."""

import numpy as np
import pandas as pd
import pytest
from crowdkit.aggregation import MACE, DawidSkene, MajorityVote
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evaluation.quality.aggregation import (
    DAWID_SKENE,
    MACE_METHOD,
    MAJORITY,
    METHODS,
    Row,
    aggregate,
    gold_accuracy,
    posterior,
    standing_alone,
    wilson,
)


def simulated_rows(seed=0, items=40, accuracies=(0.95, 0.85, 0.75, 0.5), labels="abc"):
    rng = np.random.default_rng(seed)
    truth = {item: labels[rng.integers(len(labels))] for item in range(items)}
    rows = []
    for item, true in truth.items():
        for annotator, accuracy in enumerate(accuracies):
            if rng.random() < accuracy:
                label = true
            else:
                label = rng.choice([label for label in labels if label != true])
            rows.append(Row(item, f"w{annotator}", str(label)))
    return truth, rows


def crowdkit_frame(rows):
    return pd.DataFrame([(r.item, r.annotator, r.label) for r in rows], columns=["task", "worker", "label"])


def crowdkit_fit(model, rows):
    """crowd-kit's model fitted on the rows with annotators and labels coded in their order of first appearance
    (crowd-kit 1.4's MACE sums its label counts in sorted order but reads them in that order: with codes the two
    agree), its labels and probabilities decoded again."""
    frame = crowdkit_frame(rows)
    workers, worker_names = pd.factorize(frame["worker"])
    labels, label_names = pd.factorize(frame["label"])
    fitted = model.fit(frame.assign(worker=workers, label=labels))
    probas = fitted.probas_.fillna(0.0).rename(columns=lambda code: label_names[code])
    return fitted, {item: label_names[code] for item, code in fitted.labels_.items()}, probas, worker_names


@pytest.mark.parametrize(
    ("method", "model"),
    [
        (MAJORITY, lambda: MajorityVote()),
        (DAWID_SKENE, lambda: DawidSkene(n_iter=100)),
        (MACE_METHOD, lambda: MACE(n_iter=50, n_restarts=1, random_state=0)),
    ],
)
@pytest.mark.parametrize("seed", [0, 5])
def test_labels_and_probabilities_equal_crowdkits_on_the_same_judgments(method, model, seed):
    _truth, rows = simulated_rows(seed=seed, items=25)
    ours = aggregate(rows, method=method, resamples=10)
    _fitted, labels, probas, _workers = crowdkit_fit(model(), rows)
    assert ours.labels == labels
    for item, row in probas.iterrows():
        for label, value in row.items():
            assert ours.probabilities[item][label] == pytest.approx(value, abs=1e-9), (item, label)


def test_mace_spam_scores_are_crowdkits_by_annotator():
    _truth, rows = simulated_rows(seed=3, items=25)
    ours = aggregate(rows, method=MACE_METHOD, resamples=10)
    fitted, _labels, _probas, workers = crowdkit_fit(MACE(n_iter=50, n_restarts=1, random_state=0), rows)
    for index, worker in enumerate(workers):
        assert ours.competence[worker].spam == pytest.approx(fitted.spamming_[index, 0], abs=1e-9)


def test_crowdkits_ten_restarts_are_its_first_one():
    """MACE restarts from one seeded state: crowd-kit's default ten restarts give the single restart's result."""
    _truth, rows = simulated_rows(seed=4, items=6, accuracies=(0.9, 0.6, 0.5))
    one = crowdkit_fit(MACE(n_iter=10, n_restarts=1), rows)[2]
    ten = crowdkit_fit(MACE(n_iter=10, n_restarts=10), rows)[2]
    pd.testing.assert_frame_equal(one, ten)


def test_the_models_find_the_annotator_who_answers_at_random():
    _truth, rows = simulated_rows(seed=1, items=80, accuracies=(0.9, 0.9, 0.85, 1 / 3))
    for method in (DAWID_SKENE, MACE_METHOD):
        competence = aggregate(rows, method=method, resamples=200).competence
        assert min(competence, key=lambda a: competence[a].value) == "w3", method
        assert competence["w3"].high < competence["w0"].low, method
    spam = aggregate(rows, method=MACE_METHOD, resamples=10).competence
    assert max(spam, key=lambda a: spam[a].spam) == "w3"


def test_dawid_skene_is_at_least_as_accurate_as_the_majority_with_a_spammer_and_an_adversary():
    rng = np.random.default_rng(7)
    truth = {item: "ab"[rng.integers(2)] for item in range(150)}
    accuracies = {"good1": 0.85, "good2": 0.8, "good3": 0.8, "spam": 0.5, "adversary": 0.1}
    rows = [
        Row(item, annotator, true if rng.random() < accuracy else {"a": "b", "b": "a"}[true])
        for item, true in truth.items()
        for annotator, accuracy in accuracies.items()
    ]
    right = {
        method: sum(aggregate(rows, method=method, resamples=0).labels[i] == t for i, t in truth.items())
        for method in METHODS
    }
    assert right[DAWID_SKENE] >= right[MAJORITY], right


def test_control_items_keep_their_known_label_and_seed_dawid_skene():
    _truth, rows = simulated_rows(seed=2)
    result = aggregate(rows, method=DAWID_SKENE, gold={0: "c", 1: "a"}, resamples=10)
    assert (result.labels[0], result.probability(0)) == ("c", 1.0)
    assert result.labels[1] == "a"


def test_dawid_skene_seeded_by_control_items_equals_crowdkits_with_those_true_labels():
    _truth, rows = simulated_rows(seed=6, items=25)
    gold = {0: "c", 3: "a", 7: "b"}
    ours = aggregate(rows, method=DAWID_SKENE, gold=gold, resamples=10)
    fitted = DawidSkene(n_iter=100).fit(crowdkit_frame(rows), true_labels=pd.Series(gold))
    probas = fitted.probas_.fillna(0.0)
    for item, row in probas.iterrows():
        if item in gold:
            continue  # reported as known, with probability 1
        assert ours.labels[item] == fitted.labels_[item], item
        for label, value in row.items():
            assert ours.probabilities[item][label] == pytest.approx(value, abs=1e-9), (item, label)


def test_an_annotator_standing_alone_is_named_with_the_item():
    rows = [Row(1, "a", "x"), Row(1, "b", "x"), Row(1, "c", "y"), Row(2, "a", "x"), Row(2, "c", "x")]
    assert standing_alone(rows) == {"c": [1]}


def test_accuracy_on_control_items_has_a_wilson_interval():
    rows = [Row(1, "a", "x"), Row(2, "a", "y"), Row(1, "b", "x"), Row(3, "b", "z")]
    accuracy = gold_accuracy(rows, {1: "x", 2: "x"})
    assert accuracy["a"][:3] == (1, 2, 0.5)
    assert accuracy["b"][:3] == (1, 1, 1.0)
    low, high = wilson(1, 2)
    assert accuracy["a"][3:] == (low, high)
    assert 0 < low < 0.5 < high < 1


# --- Invariants on random annotation matrices --------------------------------------------------------------

matrices = st.integers(min_value=2, max_value=4).flatmap(
    lambda n_labels: st.lists(
        st.lists(st.one_of(st.none(), st.integers(0, n_labels - 1)), min_size=3, max_size=5),
        min_size=3,
        max_size=12,
    )
)


def matrix_rows(matrix):
    return [
        Row(item, f"w{annotator}", f"l{label}")
        for item, labels in enumerate(matrix)
        for annotator, label in enumerate(labels)
        if label is not None
    ]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(matrix=matrices, method=st.sampled_from(METHODS))
def test_every_items_probabilities_sum_to_one(matrix, method):
    result = aggregate(matrix_rows(matrix), method=method, resamples=0)
    for item, distribution in result.probabilities.items():
        assert sum(distribution.values()) == pytest.approx(1.0, abs=1e-6), item
        assert all(0 <= p <= 1 + 1e-9 for p in distribution.values()), item


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(matrix=matrices)
def test_a_unanimous_item_keeps_its_label_under_the_majority(matrix):
    rows = matrix_rows(matrix)
    result = aggregate(rows, method=MAJORITY, resamples=0)
    labels_by_item = {}
    for row in rows:
        labels_by_item.setdefault(row.item, set()).add(row.label)
    for item, labels in labels_by_item.items():
        if len(labels) == 1:
            assert result.labels[item] == next(iter(labels)), (item, result.probabilities[item])


def test_dawid_skene_may_overrule_a_unanimous_item_exactly_as_crowdkit_does():
    """An annotator model is not bound by unanimity: here the two annotators who agree on item 0 judged nothing
    else, and the one who judged the other two items said l1 to both, so Dawid-Skene leans to l1 for item 0 too.
    The platform reports the model's answer as crowd-kit computes it (the majority stays beside it, and a person
    decides)."""
    rows = matrix_rows([[None, 0, 0], [1, None, None], [1, None, None]])
    ours = aggregate(rows, method=DAWID_SKENE, resamples=0)
    _fitted, labels, probas, _workers = crowdkit_fit(DawidSkene(n_iter=100), rows)
    assert ours.labels == labels
    for item, row in probas.iterrows():
        for label, value in row.items():
            assert ours.probabilities[item][label] == pytest.approx(value, abs=1e-9), (item, label)
    assert aggregate(rows, method=MAJORITY, resamples=0).labels[0] == "l0"


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 10_000),
    n_labels=st.integers(2, 4),
    others=st.lists(st.floats(0.0, 0.9), min_size=2, max_size=4),
    method=st.sampled_from(METHODS),
)
def test_an_annotator_who_always_agrees_with_the_truth_gets_the_highest_competence(
    seed, n_labels, others, method
):
    """With the truth known (every item a control item), whatever the others do, the always-right annotator is
    the most competent. (Without it an EM model can settle on another reading of thirty items; the benchmark
    and the spammer tests above measure that case.)"""
    rng = np.random.default_rng(seed)
    labels = [f"l{n}" for n in range(n_labels)]
    rows, truth = [], {}
    for item in range(20):
        truth[item] = true = labels[rng.integers(n_labels)]
        rows.append(Row(item, "oracle", true))
        for annotator, accuracy in enumerate(others):
            label = true if rng.random() < accuracy else labels[rng.integers(n_labels)]
            rows.append(Row(item, f"w{annotator}", label))
    competence = aggregate(rows, method=method, gold=truth, resamples=0).competence
    best = max(c.value for c in competence.values())
    assert competence["oracle"].value == pytest.approx(1.0), competence["oracle"]
    assert competence["oracle"].value == pytest.approx(best), {a: c.value for a, c in competence.items()}


@given(
    labels=st.lists(st.tuples(st.sampled_from(["w0", "w1", "w2"]), st.sampled_from("xyz")), max_size=6),
    method=st.sampled_from(METHODS),
)
def test_an_items_posterior_given_fitted_models_sums_to_one(labels, method):
    distribution = posterior(labels, classes=["x", "y"], method=method)
    assert sum(distribution.values()) == pytest.approx(1.0)
