"""Label aggregation with annotator models: majority vote, Dawid–Skene and MACE (through ``crowd-kit``).

Plain Python over a long table of judgments (item, annotator, label), free of Django. Every method
returns the same shape: each item's label and the posterior probability of every label, and each
annotator's competence: the expected share of their judgments that are right under the method's
posterior, with a seeded percentile bootstrap interval over their judgments. Dawid–Skene adds each
annotator's confusion matrix, MACE each annotator's probability of spamming.
"""

from __future__ import annotations

import warnings
from collections import defaultdict
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # pandas (and crowd-kit) load when a model is fitted, not when Django starts
    import pandas as pd

MAJORITY = "majority"
DAWID_SKENE = "dawid_skene"
MACE_METHOD = "mace"
METHODS = (MAJORITY, DAWID_SKENE, MACE_METHOD)

# crowd-kit's own defaults for the iterations, fixed here so that results do not move with its releases.
DS_ITERATIONS = 100
MACE_ITERATIONS = 50


@dataclass(frozen=True)
class Row:
    """One judgment of one question: who said which label of which item."""

    item: Hashable
    annotator: Hashable
    label: str


@dataclass(frozen=True)
class Competence:
    """An annotator's estimated competence: the expected share of right judgments, with its interval."""

    annotator: Hashable
    judgments: int
    value: float
    low: float
    high: float
    spam: float | None = None  # MACE: the probability that the annotator answers at random
    confusion: dict | None = None  # Dawid–Skene: true label → given label → probability


@dataclass
class Aggregation:
    """What one method makes of one question's judgments."""

    method: str
    classes: list[str]
    labels: dict  # item → label
    probabilities: dict  # item → {label: probability}
    competence: dict[Hashable, Competence] = field(default_factory=dict)
    priors: dict[str, float] = field(default_factory=dict)  # Dawid–Skene: the share of each true label

    def probability(self, item) -> float:
        """The probability of the item's chosen label."""
        return float(self.probabilities[item][self.labels[item]])


def as_frame(rows: Iterable[Row]) -> pd.DataFrame:
    """crowd-kit's long table: ``task``, ``worker``, ``label``, one judgment a row."""
    import pandas as pd

    frame = pd.DataFrame(
        [(row.item, row.annotator, str(row.label)) for row in rows], columns=["task", "worker", "label"]
    )
    return frame.astype({"label": object})


def aggregate(
    rows: Sequence[Row],
    *,
    method: str,
    gold: Mapping | None = None,
    resamples: int = 1000,
    seed: int = 0,
) -> Aggregation:
    """Aggregate one question's judgments with ``method`` (one of ``METHODS``).

    ``gold`` maps control items to their known label: Dawid–Skene starts its annotator models from them
    (crowd-kit's ``true_labels``); every method then reports them as they are, with probability 1.
    """
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}, not {method!r}")
    rows = [row for row in rows if row.label != ""]
    if not rows:
        return Aggregation(method=method, classes=[], labels={}, probabilities={})
    frame = as_frame(rows)
    gold = {item: str(label) for item, label in (gold or {}).items() if item in set(frame["task"])}
    model = fit(frame, method=method, gold=gold)
    probas = model.probas_.fillna(0.0)
    classes = [str(label) for label in probas.columns]
    probabilities = {
        item: {str(label): float(value) for label, value in row.items()} for item, row in probas.iterrows()
    }
    for item, label in gold.items():
        probabilities[item] = {name: float(name == label) for name in set(classes) | {label}}
    labels = {item: max(sorted(dist), key=dist.__getitem__) for item, dist in probabilities.items()}
    for item, label in model.labels_.items():
        if item not in gold and probabilities[item].get(str(label), 0) >= max(probabilities[item].values()):
            labels[item] = str(label)  # crowd-kit's own choice among equals
    result = Aggregation(method=method, classes=classes, labels=labels, probabilities=probabilities)
    spam, confusion = _annotator_parameters(model, frame, method)
    if method == DAWID_SKENE:
        result.priors = {str(label): float(value) for label, value in model.priors_.items()}
    # The majority's vote shares are no model of the annotators: there, competence is agreement with its label.
    scored = {item: {label: 1.0} for item, label in labels.items()} if method == MAJORITY else probabilities
    result.competence = annotator_competence(
        rows, scored, resamples=resamples, seed=seed, spam=spam, confusion=confusion
    )
    return result


def fit(frame: pd.DataFrame, *, method: str, gold: Mapping | None = None):
    """The fitted crowd-kit model (``labels_``, ``probas_`` and the annotator parameters)."""
    import pandas as pd
    from crowdkit.aggregation import DawidSkene, MajorityVote

    if method == MACE_METHOD:
        return MaceModel().fit(frame)
    # crowd-kit 1.4 warns of pandas keywords pandas 4 removes on every iteration: noise here, and slow to record.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if method == MAJORITY:
            return MajorityVote().fit(frame)
        true_labels = pd.Series(dict(gold)) if gold else None
        return DawidSkene(n_iter=DS_ITERATIONS).fit(frame, true_labels=true_labels)


class MaceModel:
    """crowd-kit's MACE (variational Bayes, its defaults) with its pandas group-bys written as numpy sums.

    crowd-kit 1.4 starts every restart from the same seeded state, so its ten restarts give the first one's
    result; one restart here is the same model, about fifty times faster (a test holds the two equal).
    Annotators and labels are coded in their order of first appearance, as crowd-kit codes them.
    """

    def __init__(
        self, *, n_iter: int = MACE_ITERATIONS, alpha: float = 0.5, beta: float = 0.5, noise: float = 0.5
    ):
        self.n_iter, self.alpha, self.beta, self.noise = n_iter, alpha, beta, noise

    def fit(self, frame: pd.DataFrame) -> MaceModel:
        import pandas as pd
        import scipy.stats as sps

        workers, worker_names = pd.factorize(frame["worker"])
        labels, label_names = pd.factorize(frame["label"])
        tasks, task_names = pd.factorize(frame["task"])
        n_workers, n_labels = len(worker_names), len(label_names)
        spam = sps.uniform(1, 1 + self.noise).rvs(size=(n_workers, 2), random_state=0)
        thetas = sps.uniform(1, 1 + self.noise).rvs(size=(n_workers, n_labels), random_state=0)
        self.spamming_ = spam / spam.sum(axis=1, keepdims=True)
        self.thetas_ = thetas / thetas.sum(axis=1, keepdims=True)
        theta_priors = np.tile([self.alpha, self.beta], (n_workers, 1))
        strategy_priors = np.full((n_workers, n_labels), 10.0)
        step = (tasks, workers, labels, len(task_names), n_workers, n_labels)
        marginals, strategy, knowing = self._e_step(*step)
        for _ in range(self.n_iter):
            self.spamming_ = _variational_normalize(knowing, theta_priors)
            self.thetas_ = _variational_normalize(strategy, strategy_priors)
            marginals, strategy, knowing = self._e_step(*step)
        probas = marginals / marginals.sum(axis=1, keepdims=True)
        self.probas_ = pd.DataFrame(probas, index=task_names, columns=label_names)
        self.labels_ = self.probas_.idxmax(axis="columns")
        return self

    def _e_step(self, tasks, workers, labels, n_tasks, n_workers, n_labels):
        spam, thetas = self.spamming_, self.thetas_
        strategy_part = spam[workers, 0] * thetas[workers, labels]
        marginals = np.empty((n_tasks, n_labels))
        for label in range(n_labels):
            likelihood = strategy_part + spam[workers, 1] * (labels == label)
            marginals[:, label] = np.exp(np.bincount(tasks, weights=np.log(likelihood), minlength=n_tasks))
        marginals /= n_labels
        instance = marginals.sum(axis=1)
        strategy_marginal = np.zeros(len(tasks))
        for label in range(n_labels):
            strategy_marginal += marginals[tasks, label] / (
                strategy_part + spam[workers, 1] * (labels == label)
            )
        strategy_marginal *= strategy_part / instance[tasks]
        strategy = np.zeros((n_workers, n_labels))
        np.add.at(strategy, (workers, labels), strategy_marginal)
        knowing_marginal = (
            marginals[tasks, labels] * spam[workers, 1] / (strategy_part + spam[workers, 1]) / instance[tasks]
        )
        knowing = np.stack(
            [
                np.bincount(workers, weights=strategy_marginal, minlength=n_workers),
                np.bincount(workers, weights=knowing_marginal, minlength=n_workers),
            ],
            axis=1,
        )
        return marginals, strategy, knowing


def _variational_normalize(counts: np.ndarray, priors: np.ndarray) -> np.ndarray:
    from scipy.special import digamma

    norm = np.exp(digamma((counts + priors).sum(axis=1)))[:, np.newaxis]
    return np.divide(
        np.exp(digamma(counts + priors)), norm, out=np.zeros_like(counts), where=~np.isclose(norm, 0)
    )


def _annotator_parameters(model, frame: pd.DataFrame, method: str) -> tuple[dict, dict]:
    import pandas as pd

    spam: dict = {}
    confusion: dict = {}
    if method == MACE_METHOD:
        _, workers = pd.factorize(frame["worker"])
        spam = {worker: float(model.spamming_[index, 0]) for index, worker in enumerate(workers)}
    elif method == DAWID_SKENE:
        errors = model.errors_  # index (worker, given label), columns true label
        for (worker, given), row in errors.iterrows():
            for true, value in row.items():
                confusion.setdefault(worker, {}).setdefault(str(true), {})[str(given)] = float(value)
    return spam, confusion


def annotator_competence(
    rows: Sequence[Row],
    probabilities: Mapping,
    *,
    resamples: int = 1000,
    seed: int = 0,
    spam: Mapping | None = None,
    confusion: Mapping | None = None,
) -> dict[Hashable, Competence]:
    """Each annotator's expected share of right judgments under the posterior (majority vote: the share that
    agrees with the majority label), with a 95 % percentile
    bootstrap interval over their judgments (the posterior held fixed: the interval says how much the
    figure would move with other judgments of the same annotator, not with a refitted model)."""
    scores: dict[Hashable, list[float]] = defaultdict(list)
    for row in rows:
        scores[row.annotator].append(probabilities.get(row.item, {}).get(str(row.label), 0.0))
    rng = np.random.default_rng(seed)
    result = {}
    for annotator in sorted(scores, key=str):
        values = np.asarray(scores[annotator], dtype=float)
        means = values[rng.integers(0, len(values), size=(resamples, len(values)))].mean(axis=1)
        low, high = np.percentile(means, [2.5, 97.5]) if resamples else (values.mean(), values.mean())
        result[annotator] = Competence(
            annotator=annotator,
            judgments=len(values),
            value=float(values.mean()),
            low=float(low),
            high=float(high),
            spam=(spam or {}).get(annotator),
            confusion=(confusion or {}).get(annotator),
        )
    return result


def standing_alone(rows: Sequence[Row]) -> dict[Hashable, list]:
    """Per annotator, the items where their label is one nobody else gave while at least two others agreed."""
    by_item: dict = defaultdict(list)
    for row in rows:
        if row.label != "":
            by_item[row.item].append(row)
    alone: dict[Hashable, list] = defaultdict(list)
    for item, item_rows in by_item.items():
        for row in item_rows:
            others = [other.label for other in item_rows if other.annotator != row.annotator]
            if len(others) >= 2 and len(set(others)) == 1 and others[0] != row.label:
                alone[row.annotator].append(item)
    return dict(alone)


def posterior(
    labels: Sequence[tuple[Hashable, str]],
    *,
    classes: Sequence[str],
    method: str,
    priors: Mapping[str, float] | None = None,
    competence: Mapping[Hashable, Competence] | None = None,
    default_accuracy: float = 0.7,
) -> dict[str, float]:
    """The probability of each label of one item from its judgments ``(annotator, label)``, with the annotator
    models fitted on the project so far (the adaptive overlap asks this after every judgment).

    Majority: the smoothed vote shares (add-one). Dawid–Skene: prior × each annotator's confusion row.
    MACE: each annotator answers the truth unless spamming, and spams uniformly. An annotator the model
    has not seen yet is right with ``default_accuracy`` and otherwise picks any other label alike.
    """
    classes = sorted(set(classes) | {label for _, label in labels if label != ""})
    if not classes:
        return {}
    k = len(classes)
    if method == MAJORITY:
        counts = {label: 1.0 for label in classes}
        for _, label in labels:
            counts[label] += 1.0
        total = sum(counts.values())
        return {label: value / total for label, value in counts.items()}
    competence = competence or {}
    log_p = np.log(np.array([max((priors or {}).get(label, 1.0 / k), 1e-9) for label in classes]))
    for annotator, given in labels:
        known = competence.get(annotator)
        for index, true in enumerate(classes):
            if method == DAWID_SKENE and known is not None and known.confusion:
                row = known.confusion.get(true, {})
                likelihood = row.get(given, 0.0)
            elif method == MACE_METHOD and known is not None and known.spam is not None:
                likelihood = known.spam / k + (1 - known.spam) * (given == true)
            else:
                accuracy = known.value if known is not None else default_accuracy
                likelihood = accuracy if given == true else (1 - accuracy) / max(k - 1, 1)
            log_p[index] += np.log(max(likelihood, 1e-6))
    p = np.exp(log_p - log_p.max())
    p /= p.sum()
    return {label: float(value) for label, value in zip(classes, p, strict=True)}


def gold_accuracy(rows: Sequence[Row], gold: Mapping) -> dict[Hashable, tuple[int, int, float, float, float]]:
    """Per annotator, on the control items: (right, answered, share, Wilson 95 % low, high)."""
    counts: dict = defaultdict(lambda: [0, 0])
    for row in rows:
        if row.item in gold and row.label != "":
            counts[row.annotator][1] += 1
            counts[row.annotator][0] += str(gold[row.item]) == str(row.label)
    return {annotator: (right, n, right / n, *wilson(right, n)) for annotator, (right, n) in counts.items()}


def wilson(successes: int, n: int, z: float = 1.959964) -> tuple[float, float]:
    """Wilson's score interval for a proportion (Wilson 1927)."""
    if n == 0:
        return 0.0, 1.0
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return float(max(0.0, centre - half)), float(min(1.0, centre + half))
