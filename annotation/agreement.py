"""Per-item agreement figures for the curator: plain arithmetic over one round's judgments.

Chance-corrected statistics over many items (Cohen's and Fleiss' kappa, Krippendorff's alpha)
belong to the evaluation app. Here each item is looked at on its own: how many of its
annotators' pairs agree on the vote and on the class, whether there is a majority, and
how far apart the ratings of each criterion are. Nothing here touches the database.
"""

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from statistics import fmean


def pairwise_agreement(values: Sequence) -> float | None:
    """The share of pairs of annotators who gave the same value; None with fewer than two values."""
    values = [value for value in values if value not in (None, "")]
    n = len(values)
    if n < 2:
        return None
    agreeing_pairs = sum(count * (count - 1) for count in Counter(values).values())
    return agreeing_pairs / (n * (n - 1))


def majority(values: Sequence) -> str | None:
    """The value more than half of the annotators gave, or None when there is none (a split or a tie)."""
    values = [value for value in values if value not in (None, "")]
    if not values:
        return None
    value, count = Counter(values).most_common(1)[0]
    return value if count * 2 > len(values) else None


@dataclass
class CriterionSpread:
    key: str
    label: str
    ratings: list[int]
    scale_min: int
    scale_max: int

    @property
    def mean(self) -> float | None:
        return fmean(self.ratings) if self.ratings else None

    @property
    def range(self) -> int | None:
        return max(self.ratings) - min(self.ratings) if self.ratings else None

    @property
    def relative_range(self) -> float:
        """The range as a share of the scale: 0 when all agree, 1 when they span it."""
        width = self.scale_max - self.scale_min
        return (self.range or 0) / width if width > 0 else 0.0


@dataclass
class ItemAgreement:
    """One item's round, summed up: majority vote, mean ratings and how much the annotators agree."""

    n_judgments: int
    votes: list[str]
    class_labels: list[str]
    criteria: list[CriterionSpread] = field(default_factory=list)

    @property
    def majority_vote(self) -> str | None:
        return majority(self.votes)

    @property
    def majority_class(self) -> str | None:
        return majority(self.class_labels)

    @property
    def vote_agreement(self) -> float | None:
        return pairwise_agreement(self.votes)

    @property
    def class_agreement(self) -> float | None:
        return pairwise_agreement(self.class_labels)

    @property
    def mean_ratings(self) -> dict[str, float | None]:
        return {criterion.key: criterion.mean for criterion in self.criteria}

    @property
    def disagreement(self) -> float:
        """0 (everyone agrees) to 1: the mean of vote and class disagreement and the ratings' relative range.

        Used to put the most disputed items first in the review queue. Parts that cannot be
        measured (fewer than two votes, no ratings) count as agreement.
        """
        parts = [
            1 - (self.vote_agreement if self.vote_agreement is not None else 1),
            1 - (self.class_agreement if self.class_agreement is not None else 1),
        ]
        rated = [criterion.relative_range for criterion in self.criteria if criterion.ratings]
        parts.append(fmean(rated) if rated else 0.0)
        return round(fmean(parts), 4)


def item_agreement(judgments: Iterable, criteria: Sequence[dict]) -> ItemAgreement:
    """Sum up ``judgments`` (objects or dicts with ratings, vote and causal_class) of one item's round.

    ``criteria`` is the project's list of {"key", "label", "min", "max"}.
    """
    rows = [_as_dict(judgment) for judgment in judgments]
    spreads = []
    for criterion in criteria:
        ratings = [
            row["ratings"][criterion["key"]]
            for row in rows
            if row["ratings"].get(criterion["key"]) is not None
        ]
        spreads.append(
            CriterionSpread(
                key=criterion["key"],
                label=criterion.get("label", criterion["key"]),
                ratings=[int(rating) for rating in ratings],
                scale_min=int(criterion.get("min", 1)),
                scale_max=int(criterion.get("max", 5)),
            )
        )
    return ItemAgreement(
        n_judgments=len(rows),
        votes=[row["vote"] for row in rows],
        class_labels=[row["causal_class"] for row in rows],
        criteria=spreads,
    )


def _as_dict(judgment) -> dict:
    if isinstance(judgment, dict):
        return {
            "ratings": judgment.get("ratings") or {},
            "vote": judgment.get("vote", ""),
            "causal_class": judgment.get("causal_class", ""),
        }
    return {"ratings": judgment.ratings or {}, "vote": judgment.vote, "causal_class": judgment.causal_class}
