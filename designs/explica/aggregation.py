"""ExpliCa's aggregation: the gold relation of each pair and order from the raters' mean ratings.

The rule, as the paper states it: per pair and order, the connective with the highest mean rating
gives the relation's type (causal / temporal) and order (iconic / anti-iconic). A pair and order
whose best mean is not above ``best_mean_above`` (6) and whose overall mean is below
``overall_mean_below`` (5) is *unrelated*. When two connectives share the highest mean the tie is
reported and the items wait for a curator (``explica_tie_resolve``); it is never broken silently.
Means are compared exactly (as fractions), so a tie is a tie and not a rounding accident.

The label, with the rule and thresholds that produced it, is stored on the pair
(``group.metadata["gold"]``) and on each of its items (``item.metadata["gold"]``), so a release
freezes it with the items.
"""

import json
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from fractions import Fraction

from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models.fields.json import KeyTextTransform
from django.utils import timezone

from annotation.models import Assignment, Item, ItemGroup, Judgment, Membership, Project
from annotation.queue import items_recount_rounds
from annotation.services import items_close
from core.db.bulk import fast_update

from .design import RATING, direction_of, unrelated_rule

# The paper does not say how the "overall mean" of the unrelated rule treats connectives with fewer ratings. It
# pools the ratings: the mean of every rating of the pair in that order, all connectives together, so a
# connective rated by more people weighs more. With every item fully rated (the paper's 15 raters each) this
# equals the mean of the connectives' means; the label keeps both so a reader can see when they differ.
OVERALL_MEAN = (
    "pooled: the mean of all ratings of the pair in that order, every connective's together (not the "
    "mean of the connectives' means)"
)

RULE_TEXT = (
    "per pair and order, the connective with the highest mean rating gives the relation type and order; "
    "unrelated when the best mean is not above {best_mean_above} and the overall mean is below "
    "{overall_mean_below}; ties are left to a curator"
)


@dataclass
class OrderLabel:
    """The label of a pair in one order (A–B or B–A)."""

    order: str
    means: dict[str, Fraction]
    n_ratings: dict[str, int]
    best: list[str]
    overall_mean: Fraction
    label: str  # causal, temporal, unrelated or "tie"
    connective: str = ""
    relation_order: str = ""
    direction: str = ""
    decided_by: str = "rule"

    @property
    def best_mean(self) -> Fraction:
        return max(self.means.values())

    @property
    def mean_of_means(self) -> Fraction:
        return sum(self.means.values(), Fraction(0)) / len(self.means)

    def as_dict(self) -> dict:
        return {
            "order": self.order,
            "label": self.label,
            "connective": self.connective,
            "relation_order": self.relation_order,
            "direction": self.direction,
            "decided_by": self.decided_by,
            "best": list(self.best),
            "best_mean": round(float(self.best_mean), 4),
            "overall_mean": round(float(self.overall_mean), 4),
            "mean_of_connective_means": round(float(self.mean_of_means), 4),
            "means": {word: round(float(mean), 4) for word, mean in self.means.items()},
            "n_ratings": dict(self.n_ratings),
        }


@dataclass
class PairLabel:
    group: ItemGroup
    orders: dict[str, OrderLabel]

    @property
    def tied(self) -> list[str]:
        return [order for order, label in self.orders.items() if label.label == "tie"]


@dataclass
class AggregationReport:
    labelled: list[PairLabel] = field(default_factory=list)
    ties: list[PairLabel] = field(default_factory=list)
    incomplete: dict[str, int] = field(default_factory=dict)  # pair → items still short of ratings
    approved_items: int = 0


def label_order(order: str, ratings: dict[str, list[int]], connectives: list[dict], rule: dict) -> OrderLabel:
    """Label one pair in one order from its ratings per connective word."""
    by_word = {connective["word"]: connective for connective in connectives}
    means = {word: Fraction(sum(values), len(values)) for word, values in ratings.items() if values}
    if len(means) != len(by_word):
        missing = sorted(set(by_word) - set(means))
        raise ValueError(f"order {order}: no ratings for {', '.join(missing)}")
    everything = [value for values in ratings.values() for value in values]
    overall = Fraction(sum(everything), len(everything))
    top = max(means.values())
    best = [word for word in by_word if means[word] == top]
    result = OrderLabel(
        order=order,
        means=means,
        n_ratings={w: len(v) for w, v in ratings.items()},
        best=best,
        overall_mean=overall,
        label="tie",
    )
    if top <= Fraction(str(rule["best_mean_above"])) and overall < Fraction(str(rule["overall_mean_below"])):
        result.label = "unrelated"
    elif len(best) == 1:
        chosen = by_word[best[0]]
        result.label, result.connective, result.relation_order = (
            chosen["type"],
            chosen["word"],
            chosen["order"],
        )
        result.direction = direction_of(order, chosen["order"])
    return result


@dataclass
class PairItem:
    """What the aggregation needs of an item (read as plain values: 4,800 model instances cost 0.1 s)."""

    pk: int
    round: int
    group_id: int
    metadata: dict


def _pair_items(items) -> list[PairItem]:
    return [PairItem(*row) for row in items.values_list("pk", "round", "group_id", "metadata")]


def pair_ratings(project: Project, groups: list[ItemGroup]) -> tuple[dict, dict, dict, list[PairItem]]:
    """For each pair: its ratings in the items' current round ({order: {word: [ratings]}}), its connectives as
    its items were generated (word, type, order; a later edit of the project's table does not relabel them), and
    how many of its items still lack ratings; and the pairs' items (with their metadata)."""
    group_ids = [group.pk for group in groups]
    items = _pair_items(
        Item.objects.filter(project=project, group_id__in_many=group_ids).order_by(
            "group_id", "position_in_group"
        )
    )
    rounds = {item.pk: item.round for item in items}
    by_item: dict[int, list[int]] = defaultdict(list)
    # The rating is read as text by the database: decoding 72,000 JSON objects in Python cost seconds.
    judgments = (
        Judgment.objects.filter(item__project=project, item__group_id__in_many=group_ids)
        .annotate(rating=KeyTextTransform(RATING, "ratings"))
        .values_list("item_id", "round", "rating")
    )
    for item_id, round_number, rating in judgments:
        if item_id in rounds and round_number == rounds[item_id] and rating not in (None, ""):
            by_item[item_id].append(int(float(rating)))
    collected: dict[int, dict] = defaultdict(lambda: defaultdict(dict))
    connectives: dict[int, dict] = defaultdict(dict)
    short: dict[int, int] = defaultdict(int)
    for item in items:
        meta = item.metadata or {}
        values = by_item.get(item.pk, [])
        if len(values) < project.overlap:
            short[item.group_id] += 1
        collected[item.group_id][meta.get("item_order")][meta.get("connective")] = values
        connectives[item.group_id].setdefault(
            meta.get("connective"),
            {"word": meta.get("connective"), "type": meta.get("type"), "order": meta.get("order")},
        )
    return collected, {pk: list(words.values()) for pk, words in connectives.items()}, short, items


@transaction.atomic
def explica_aggregate(*, project: Project, curator=None) -> AggregationReport:
    """Label every pair whose items all have their ratings; approve the items of pairs without a tie.

    The labels are written and the items approved in a few bulk queries, whatever the number of pairs: each
    approved item's row is rewritten once, its label and its status together."""
    rule = unrelated_rule(project)
    groups = list(
        ItemGroup.objects.filter(project=project, kind="pair", items__status=Item.Status.IN_REVIEW)
        .distinct()
        .order_by("pk")
    )
    ratings, connectives, short, items = pair_ratings(project, groups)
    report = AggregationReport()
    pairs = []
    for group in groups:
        if short.get(group.pk):
            report.incomplete[str(group)] = short[group.pk]
            continue
        orders = {
            order: label_order(order, ratings[group.pk][order], connectives[group.pk], rule)
            for order in sorted(ratings[group.pk])
        }
        pair = PairLabel(group=group, orders=orders)
        pairs.append(pair)
        (report.ties if pair.tied else report.labelled).append(pair)
    labelled = {pair.group.pk for pair in report.labelled}
    report.approved_items = _store(
        project, pairs, rule, items, approve=[i.pk for i in items if i.group_id in labelled], curator=curator
    )
    return report


def _store(
    project: Project,
    pairs: list[PairLabel],
    rule: dict,
    items: list[PairItem],
    *,
    approve: list[int],
    curator,
) -> int:
    """The gold label of each pair on the pair and on each of its ``items``; the items of ``approve`` that are
    in review are approved with it (their row written once). Returns how many were approved."""
    labelled_at = timezone.now().isoformat()
    golds = {}
    for pair in pairs:
        gold = {
            "rule": RULE_TEXT.format(**rule),
            "thresholds": dict(rule),
            "raters_per_item": project.overlap,
            "overall_mean": OVERALL_MEAN,
            "orders": {order: label.as_dict() for order, label in pair.orders.items()},
            "labelled_at": labelled_at,
        }
        pair.group.metadata = {**(pair.group.metadata or {}), "gold": gold}
        golds[pair.group.pk] = gold
    fast_update(ItemGroup, ["metadata"], [pair.group for pair in pairs])
    metadata = {}
    for item in items:
        if item.group_id not in golds:
            continue
        gold = golds[item.group_id]
        meta = item.metadata or {}
        label = gold["orders"].get(meta.get("item_order"), {})
        connective = meta.get("connective")
        metadata[item.pk] = {
            **meta,
            "stage": "aggregation",
            "mean_rating": label.get("means", {}).get(connective),
            "n_ratings": label.get("n_ratings", {}).get(connective),
            "gold": {
                **{
                    key: label.get(key)
                    for key in (
                        "label",
                        "connective",
                        "relation_order",
                        "direction",
                        "decided_by",
                        "best",
                        "best_mean",
                        "overall_mean",
                    )
                },
                "order": meta.get("item_order"),
                "rule": gold["rule"],
                "thresholds": gold["thresholds"],
            },
        }
    note = "ExpliCa aggregation: " + RULE_TEXT.format(**rule)
    approved = set(
        items_close(
            item_ids=[pk for pk in approve if pk in metadata], curator=curator, note=note, metadata=metadata
        )
        if approve
        else ()
    )
    rest = [item for item in items if item.pk in metadata and item.pk not in approved]
    for item in rest:
        item.metadata = metadata[item.pk]
    fast_update(Item, ["metadata"], rest)
    return len(approved)


@transaction.atomic
def explica_tie_resolve(*, group: ItemGroup, order: str, connective: str, curator) -> PairLabel | None:
    """A curator picks one of the tied connectives of a pair's order; the label records that a person chose it.

    When no tie is left the pair's items are approved. Returns the pair's labels, or raises ValueError.
    """
    group = ItemGroup.objects.select_for_update().get(pk=group.pk)
    gold = (group.metadata or {}).get("gold") or {}
    label = (gold.get("orders") or {}).get(order)
    if not label or label.get("label") != "tie":
        raise ValueError(f"pair {group}: order {order!r} has no tie to resolve")
    if connective not in label["best"]:
        raise ValueError(
            f"pair {group}: {connective!r} is not among the tied connectives ({', '.join(label['best'])})"
        )
    chosen = Item.objects.filter(group=group, metadata__connective=connective).values_list(
        "metadata", flat=True
    )[0]
    label.update(
        label=chosen["type"],
        connective=connective,
        relation_order=chosen["order"],
        direction=direction_of(order, chosen["order"]),
        decided_by="curator",
    )
    project = group.project
    orders = {key: _from_dict(value) for key, value in gold["orders"].items()}
    pair = PairLabel(group=group, orders=orders)
    items = _pair_items(Item.objects.filter(group=group))
    approve = [] if pair.tied else [item.pk for item in items]
    _store(project, [pair], gold["thresholds"], items, approve=approve, curator=curator)
    return pair


def _from_dict(data: dict) -> OrderLabel:
    return OrderLabel(
        order=data["order"],
        means={w: Fraction(str(m)) for w, m in data["means"].items()},
        n_ratings=data["n_ratings"],
        best=data["best"],
        overall_mean=Fraction(str(data["overall_mean"])),
        label=data["label"],
        connective=data["connective"],
        relation_order=data["relation_order"],
        direction=data["direction"],
        decided_by=data["decided_by"],
    )


def explica_summary(project: Project) -> dict:
    """Pairs, how many are labelled or tied, and how many pair orders carry each label (one query)."""
    labels: Counter = Counter()
    pairs = labelled = ties = 0
    for metadata in ItemGroup.objects.filter(project=project, kind="pair").values_list("metadata", flat=True):
        pairs += 1
        orders = ((metadata or {}).get("gold") or {}).get("orders") or {}
        if not orders:
            continue
        found = [label.get("label") for label in orders.values()]
        labels.update(found)
        ties += "tie" in found
        labelled += "tie" not in found
    return {"pairs": pairs, "labelled": labelled, "ties": ties, "labels": sorted(labels.items())}


# --- the example's ratings ---------------------------------------------------------------------


def example_ratings_load(project: Project, data: dict) -> list:
    """The example's ratings as submitted judgments of raters named after the example's (``explica-r01`` …)."""
    User = get_user_model()
    raters = {}
    for name in data["raters"]:
        user, created = User.objects.get_or_create(username=f"explica-{name}")
        if created:
            user.set_unusable_password()
            user.save(update_fields=["password"])
        Membership.objects.get_or_create(
            project=project, user=user, defaults={"role": Membership.Role.ANNOTATOR}
        )
        raters[name] = user
    items = {item.external_id: item for item in Item.objects.filter(project=project, group__kind="pair")}
    now = timezone.now()
    for row in data["ratings"]:
        item = items[f"{row['pair_id']}-{row['connective']}-{row['order']}"]
        if item.question != row["text"]:
            raise ValueError(
                f"{item.external_id}: generated {item.question!r}, the example says {row['text']!r}"
            )
        for name, rating in row["ratings"].items():
            assignment = Assignment.objects.create(
                item=item,
                annotator=raters[name],
                round=item.round,
                status=Assignment.Status.SUBMITTED,
                finished_at=now,
            )
            Judgment.objects.create(
                item=item,
                annotator=raters[name],
                assignment=assignment,
                round=item.round,
                ratings={RATING: rating},
                vote=Judgment.Vote.ACCEPT,
                causal_class=item.causal_class,
            )
    items_recount_rounds(items=list(items.values()))
    return list(raters.values())


# --- export -------------------------------------------------------------------------------------


def released_records(release) -> list[dict]:
    rows = release.items.order_by("split", "position").values_list("data", flat=True)
    records = [dict(json.loads(data) if isinstance(data, str) else data) for data in rows]
    for record in records:
        record["metadata"] = json.loads(record.get("metadata") or "{}")
    return records


def _pairs(release) -> dict[str, list[dict]]:
    pairs: dict[str, list[dict]] = defaultdict(list)
    for record in released_records(release):
        if record["metadata"].get("connective"):
            pairs[record["group"]].append(record)
    return pairs


def export_published_rows(release) -> tuple[list[str], list[dict]]:
    """The published rows of the released pairs, as the file that brought them gave them (its columns in its
    order, its values as written), pairs in the order of their lines: (columns, rows)."""
    pairs = []
    for records in _pairs(release).values():
        meta = records[0]["metadata"]
        if meta.get("published_rows"):
            pairs.append((meta.get("published_line") or 0, meta["published_rows"]))
    columns: list[str] = []
    rows = []
    for _line, published in sorted(pairs, key=lambda pair: pair[0]):
        for row in published:
            columns += [column for column, _value in row if column not in columns]
            rows.append({column: value for column, value in row})
    return columns, rows


def export_pair_rows(release):
    """One row per released pair and order, with ExpliCa's column names."""
    from .design import ITEM_ORDERS

    for pair_id, records in _pairs(release).items():
        sentences = _sentences(records)
        for order in ITEM_ORDERS:
            in_order = [r for r in records if r["metadata"].get("item_order") == order]
            if not in_order:
                continue
            gold = in_order[0]["metadata"].get("gold") or {}
            first, second = sentences if order == "ab" else tuple(reversed(sentences))
            columns = {}
            for record in in_order:
                meta = record["metadata"]
                key = f"rating_{'iconic' if meta['order'] == 'iconic' else 'anticonic'}_{meta['type']}"
                if meta.get("mean_rating") is not None:
                    columns[key] = max(columns.get(key, 0), meta["mean_rating"])
            yield {
                "pair_id": pair_id,
                "Sentence_A": first,
                "Sentence_B": second,
                "rating_iconic_causal": columns.get("rating_iconic_causal"),
                "rating_anticonic_causal": columns.get("rating_anticonic_causal"),
                "rating_iconic_temporal": columns.get("rating_iconic_temporal"),
                "rating_anticonic_temporal": columns.get("rating_anticonic_temporal"),
                "human_preferred_connective": gold.get("connective") or "",
                "human_preferred_connective_desc": _desc(gold),
                "human_preferred_connective_unrel": "yes" if gold.get("label") == "unrelated" else "no",
                "order": order,
                "tied_connectives": ",".join(gold.get("best") or []) if gold.get("label") == "tie" else "",
                "n_ratings": sum(r["metadata"].get("n_ratings") or 0 for r in in_order),
                "rule": gold.get("rule", ""),
            }


def export_item_rows(release):
    """One row per released item (ExpliCa's "4800 version" columns)."""
    for pair_id, records in _pairs(release).items():
        sentences = _sentences(records)
        for record in records:
            meta = record["metadata"]
            gold = meta.get("gold") or {}
            first, second = sentences if meta["item_order"] == "ab" else tuple(reversed(sentences))
            yield {
                "pair_id": pair_id,
                "Sentence_A": first,
                "Sentence_B": second,
                "item": record["question"],
                "tested_connective": meta["connective"],
                "tested_relation": meta["type"],
                "tested_order": meta["order"],
                "mean_rating": meta.get("mean_rating"),
                "n_ratings": meta.get("n_ratings"),
                "relation_human": gold.get("label", ""),
                "order_human": gold.get("relation_order", ""),
                "condition_human": _desc(gold),
                "human_preferred_connective": gold.get("connective", ""),
                "human_preferred_connective_unrel": "yes" if gold.get("label") == "unrelated" else "no",
            }


def _sentences(records: list[dict]) -> tuple[str, str]:
    meta = next((r["metadata"] for r in records if r["metadata"].get("sentences")), None)
    if meta:
        return tuple(meta["sentences"])
    return ("", "")


def _desc(gold: dict) -> str:
    if gold.get("label") in ("causal", "temporal"):
        return f"{gold['label']} {gold['relation_order']}"
    return gold.get("label", "")
