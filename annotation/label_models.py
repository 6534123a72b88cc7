"""Where annotation asks for what the annotator models (evaluation.quality) make of the judgments.

Annotation may not import evaluation, yet its queue and judgment services need the probability of an
item's aggregated label (the adaptive overlap), and its review page shows each item's model label. The
evaluation app registers one provider here when it starts; without one (annotation on its own) an item's
label probability is unknown and the adaptive overlap falls back to the fixed overlap.
"""

from typing import Protocol


class LabelModels(Protocol):
    def round_confidence(self, *, item, project) -> float | None:
        """The probability of the aggregated label of the item's current round, given its judgments so far."""

    def item_estimates(self, *, project, items) -> dict[int, list[dict]]:
        """Per item id: one dict per question (name, majority, label, probability, method)."""

    def project_summary(self, *, project) -> list[dict]:
        """Per question: items, labels where a model differs from the majority, the least competent annotator."""


_PROVIDER: list[LabelModels] = []


def label_models_register(provider: LabelModels) -> None:
    _PROVIDER[:] = [provider]


def round_confidence(*, item, project) -> float | None:
    return _PROVIDER[0].round_confidence(item=item, project=project) if _PROVIDER else None


def item_estimates(*, project, items) -> dict[int, list[dict]]:
    return _PROVIDER[0].item_estimates(project=project, items=items) if _PROVIDER else {}


def project_summary(*, project) -> list[dict]:
    return _PROVIDER[0].project_summary(project=project) if _PROVIDER else []


def round_wanted(*, judged: int, confidence: float | None, project) -> int:
    """How many judgments the item's round wants after ``judged`` of them: the adaptive overlap's rule.

    At least ``project.overlap``; past that, one more while the label's probability is below the project's
    threshold, up to ``project.overlap_max``. A fixed overlap (no maximum) always wants ``project.overlap``."""
    if project.overlap_max is None or judged < project.overlap:
        return project.overlap
    if judged >= project.overlap_max:
        return project.overlap_max
    if confidence is not None and confidence >= project.overlap_threshold:
        return judged
    return judged + 1
