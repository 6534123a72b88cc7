"""Freezing a project's approved items into a release, and the figures its card reports."""

import random
from collections import Counter, defaultdict
from collections.abc import Callable

import orjson
from django.db import transaction
from django.db.models import Count, Q
from django.utils import timezone

from annotation.bulk import fast_insert
from annotation.designs import design_for
from annotation.models import ImportBatch, Item, Membership, Revision

from ..models import Release, ReleaseItem
from ..selectors.releases import release_split_texts
from .records import answer_model_and_prompt, canonical_line, checksum, item_record
from .splits import SPLITS, SplitUnit, assign_splits, group_stratum

CHUNK = 2000


def releasable_items(project):
    """The approved items the project's design lets into a release (METER: whole gold entries only)."""
    return design_for(project).releasable(Item.objects.filter(project=project, status=Item.Status.APPROVED))


def approved_units(project, subsample: dict | None = None, seed: int = 0) -> tuple[list[SplitUnit], dict[str, list[int]]]:
    """The approved items as split units (a group, or one ungrouped item) and the item ids of each unit.

    With ``subsample`` ({"field", "max_per_stratum"}), only the items ``subsample_ids`` keeps."""
    keep = subsample_ids(project, subsample, seed) if subsample else None
    members: dict[str, list[tuple[int, int, str]]] = defaultdict(list)
    rows = releasable_items(project).values_list("pk", "group_id", "position_in_group", "causal_class")
    for pk, group_id, position, causal_class in rows.order_by("pk").iterator(chunk_size=10_000):
        if keep is not None and pk not in keep:
            continue
        key = f"g{group_id}" if group_id else f"i{pk}"
        members[key].append((position, pk, causal_class))
    units, item_ids = [], {}
    for key, items in members.items():
        items.sort()
        units.append(SplitUnit(key=key, stratum=group_stratum([c for _p, _pk, c in items]), size=len(items)))
        item_ids[key] = [pk for _p, pk, _c in items]
    return units, item_ids


def subsample_ids(project, subsample: dict, seed: int) -> set[int]:
    """At most ``max_per_stratum`` approved items per value of ``item.metadata[field]`` (items without it form
    one stratum), drawn with ``seed``: the same seed and items keep the same ones."""
    by_stratum: dict[str, list[int]] = defaultdict(list)
    rows = Item.objects.filter(project=project, status=Item.Status.APPROVED).values_list("pk", "metadata")
    for pk, metadata in rows.order_by("pk").iterator(chunk_size=10_000):
        value = metadata.get(subsample["field"]) if isinstance(metadata, dict) else None
        by_stratum["" if value is None else str(value)].append(pk)
    keep: set[int] = set()
    for stratum, ids in by_stratum.items():
        random.Random(f"{seed}:{stratum}").shuffle(ids)
        keep.update(ids[: subsample["max_per_stratum"]])
    return keep


def plan_positions(units, item_ids, ratios, seed) -> dict[int, tuple[str, int]]:
    """item id → (split, position): units in their seeded order, a group's items in their own order."""
    assignment, order = assign_splits(units, ratios, seed)
    next_position = Counter()
    placement = {}
    for key in order:
        split = assignment[key]
        for pk in item_ids[key]:
            placement[pk] = (split, next_position[split])
            next_position[split] += 1
    return placement


def freeze_items(release: Release, placement: dict, progress: Callable[[int], None]) -> dict:
    """Write the frozen record of every planned item, chunk by chunk; return what the card counts."""
    from generation.models import LLMCall  # evaluation may read generation; imported here to keep startup light

    tally = {"by_class_split": defaultdict(Counter), "answers": defaultdict(Counter), "models": Counter(),
             "groups": set()}
    slug = release.project.slug
    ids = sorted(placement)
    done = 0
    for start in range(0, len(ids), CHUNK):
        chunk = ids[start:start + CHUNK]
        items = list(
            Item.objects.filter(pk__in=chunk)
            .select_related("topic", "group")
            .prefetch_related("options")
            .order_by("pk")
        )
        call_ids = {item.answer_provenance.get("call_id") for item in items if isinstance(item.answer_provenance, dict)}
        models_by_call = _calls(LLMCall, {call_id for call_id in call_ids if isinstance(call_id, int)})
        rows = []
        for item in items:
            record = item_record(item, slug=slug, options=sorted(item.options.all(), key=lambda o: o.position),
                                 models_by_call=models_by_call)
            split, position = placement[item.pk]
            rows.append((item.pk, split, position, item.causal_class, canonical_line(record).decode().rstrip("\n")))
            _count(tally, item, record, split)
        with transaction.atomic():
            fast_insert(ReleaseItem, ["item_id", "split", "position", "causal_class", "data"], rows,
                        constants={"release_id": release.pk})
        done += len(items)
        progress(done)
    return tally


def release_checksum(release: Release) -> str:
    """The checksum of what was stored, read back exactly as the exports will read it."""

    def lines(split):
        return (canonical_line(orjson.loads(text)) for text in release_split_texts(release, split, CHUNK))

    return checksum(lines(split) for split in SPLITS)


def release_facts(release: Release, tally: dict, agreement: list[dict]) -> dict:
    project = release.project
    classes = list(project.label_set) + sorted(set(tally["by_class_split"]) - set(project.label_set))
    classes = [label for label in classes if tally["by_class_split"].get(label)]
    splits = Counter()
    for counts in tally["by_class_split"].values():
        splits.update(counts)
    return {
        "n_items": sum(splits.values()),
        "n_groups": len(tally["groups"]),
        "cut_on": timezone.localdate().isoformat(),
        "splits": {split: splits.get(split, 0) for split in SPLITS},
        "classes": classes,
        "by_class_split": {label: dict(tally["by_class_split"][label]) for label in classes},
        "answers": [
            {"class": label, "count": sum(tally["answers"][label].values()),
             "human": tally["answers"][label].get("human", 0), "model": tally["answers"][label].get("model", 0)}
            for label in classes
        ],
        "agreement": agreement,
        "agreement_judgments": max((row["n_judgments"] for row in agreement), default=0),
        "funnel": _funnel(project, sum(splits.values())),
        "models": _models(release, tally["models"]),
        "authors": _authors(project),
        "topics": _topic_model(project),
    }


def _topic_model(project) -> dict | None:
    """How the project's topics were found: the embedding model and clustering of the run applied last."""
    from generation.models import TopicRun

    run = (TopicRun.objects.filter(project=project, applied_at__isnull=False).order_by("-applied_at", "-pk")
           .values("pk", "embedding_model", "params", "n_topics").first())
    if run is None:
        return None
    return {"run": run["pk"], "embedding_model": run["embedding_model"], "topics": run["n_topics"],
            "clustering": (run["params"] or {}).get("used") or {}}


def _count(tally, item, record, split) -> None:
    tally["by_class_split"][item.causal_class][split] += 1
    tally["answers"][item.causal_class][record["answer_by"] or "none"] += 1
    if record["answer_by"] == "model":
        tally["models"][(record["answer_model"], record["answer_prompt"], "answer")] += 1
    if item.group_id:
        tally["groups"].add(item.group_id)


def _calls(LLMCall, call_ids: set) -> dict:
    if not call_ids:
        return {}
    rows = LLMCall.objects.filter(pk__in=call_ids).values_list(
        "pk", "endpoint__model", "template__kind", "template__name", "template__version"
    )
    return {
        pk: {"model": model or "", "template": f"{kind}/{name} v{version}" if kind else ""}
        for pk, model, kind, name, version in rows
    }


def _models(release: Release, answers: Counter) -> list[dict]:
    """Models and prompt versions behind the released text: the answers, and every model-made revision."""
    from generation.models import LLMCall

    usage = Counter(answers)
    revisions = Revision.objects.filter(item__release_items__release=release).filter(
        Q(kind=Revision.Kind.MODEL) | Q(llm_call_id__isnull=False) | Q(provenance__has_key="model")
    )
    rows = list(revisions.values_list("item_id", "kind", "llm_call_id", "provenance"))
    calls = _calls(LLMCall, {call_id for _i, _k, call_id, _p in rows if call_id})
    items_per_use: dict[tuple, set] = defaultdict(set)
    for item_id, kind, call_id, provenance in rows:
        provenance = provenance if isinstance(provenance, dict) else {}
        model, prompt = answer_model_and_prompt({**provenance, "call_id": call_id or provenance.get("call_id")}, calls)
        if model or prompt:
            items_per_use[(model, prompt, _role(kind, provenance))].add(item_id)
    for key, item_ids in items_per_use.items():
        if key not in usage:
            usage[key] = len(item_ids)
    return [
        {"model": model, "prompt": prompt, "role": role, "items": n}
        for (model, prompt, role), n in sorted(usage.items(), key=lambda pair: (-pair[1], pair[0]))
    ]


def _role(kind: str, provenance: dict) -> str:
    if provenance.get("purpose"):
        return str(provenance["purpose"])
    return {"created": "question", "model": "answer revision"}.get(kind, str(kind))


def _funnel(project, released: int) -> list[dict]:
    totals = Counter()
    for funnel in ImportBatch.objects.filter(project=project, status=ImportBatch.Status.DONE).values_list(
        "funnel", flat=True
    ):
        if isinstance(funnel, dict):
            stages = ("read", "causal", "unique", "in_length", "imported")
            totals.update({key: funnel.get(key, 0) or 0 for key in stages})
    items = Item.objects.filter(project=project).aggregate(
        total=Count("pk"),
        generated=Count("pk", filter=Q(origin=Item.Origin.GENERATED)),
        approved=Count("pk", filter=Q(status=Item.Status.APPROVED)),
        rejected=Count("pk", filter=Q(status=Item.Status.REJECTED)),
    )
    reviewed = Item.objects.filter(project=project, judgments__isnull=False).distinct().count()
    steps = []
    if totals:
        steps += [
            {"stage": "rows read from source files", "count": totals["read"]},
            {"stage": "causal", "count": totals["causal"]},
            {"stage": "unique", "count": totals["unique"]},
            {"stage": "within length bounds", "count": totals["in_length"]},
            {"stage": "imported", "count": totals["imported"]},
        ]
    steps += [
        {"stage": "questions written by models", "count": items["generated"]},
        {"stage": "items in the project", "count": items["total"]},
        {"stage": "reviewed by annotators", "count": reviewed},
        {"stage": "rejected", "count": items["rejected"]},
        {"stage": "approved (gold)", "count": items["approved"]},
        {"stage": "in this release", "count": released},
    ]
    return steps


def _authors(project) -> list[str]:
    owners = Membership.objects.filter(project=project, role=Membership.Role.OWNER).select_related("user")
    names = [m.user.get_full_name() or m.user.get_username() for m in owners.order_by("user__username")]
    return names
