"""Freezing a project's approved items into a release, and the figures its card reports."""

import hashlib
import os
import random
import tempfile
from array import array
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from typing import NamedTuple

import orjson
from django.db.models import Count, Q, TextField
from django.db.models.functions import Cast
from django.utils import timezone

from annotation.designs import design_for
from annotation.models import ImportBatch, Item, ItemGroup, Membership, Option, Revision
from core.db.bulk import StreamedInsert, gc_paused, read_ahead, wal_checkpoints_aside
from topics.models import Topic, TopicRun

from ..models import Release, ReleaseItem
from ..selectors.releases import release_split_texts
from .records import (
    ANSWER_BY,
    CAUSAL_CLASS,
    FROZEN_VALUES,
    GROUP_ID,
    PK,
    PROVENANCE_TEXT,
    TOPIC_ID,
    answer_model_and_prompt,
    canonical_line,
    checksum,
    item_record,
    json_value,
)
from .splits import SPLITS, SplitUnit, assign_splits, group_stratum

CHUNK = 2000  # items read at a time
# Items written per transaction on SQLite, and per progress report. The writing thread holds up to three such
# batches at once (made, waiting, written): 5,000 takes as long as 10,000 for 100,000 items with 30 MB less.
WRITE_CHUNK = 5000


def releasable_items(project):
    """The approved items the project's design lets into a release (METER: whole gold entries only)."""
    return design_for(project).releasable(Item.objects.filter(project=project, status=Item.Status.APPROVED))


class UnitItems(dict):
    """The item ids of each split unit, by unit key. A unit of one item (``i<id>``) is not stored: its ids are
    read from its key, which saves a list and an entry per ungrouped item (tens of MB at 100,000 items)."""

    def __missing__(self, key: str) -> list[int]:
        if key.startswith("i"):
            return [int(key[1:])]
        raise KeyError(key)


def approved_units(
    project, subsample: dict | None = None, seed: int = 0
) -> tuple[list[SplitUnit], UnitItems]:
    """The approved items as split units (a group, or one ungrouped item) and the item ids of each unit.

    With ``subsample`` ({"field", "max_per_stratum"}), only the items ``subsample_ids`` keeps."""
    keep = subsample_ids(project, subsample, seed) if subsample else None
    members: dict[str, list[tuple[int, int, str]]] = defaultdict(list)
    units, item_ids = [], UnitItems()
    classes: dict[str, str] = {}  # one string per class, not one per item
    rows = releasable_items(project).values_list("pk", "group_id", "position_in_group", "causal_class")
    # In no particular order: the units are sorted by key before the seeded shuffle, a group's items by their
    # position (then id); an ORDER BY would only make the database sort the whole project first.
    with gc_paused():
        for pk, group_id, position, causal_class in rows.order_by().iterator(chunk_size=10_000):
            if keep is not None and pk not in keep:
                continue
            causal_class = classes.setdefault(causal_class, causal_class)
            if group_id:
                members[f"g{group_id}"].append((position, pk, causal_class))
            else:  # a unit of one: its stratum is its class (what group_stratum gives, without the Counter)
                units.append(SplitUnit(f"i{pk}", causal_class, 1))
        for key, items in members.items():
            items.sort()
            units.append(SplitUnit(key, group_stratum([c for _p, _pk, c in items]), len(items)))
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
    with gc_paused():
        assignment, order = assign_splits(units, ratios, seed)
        next_position = dict.fromkeys(SPLITS, 0)
        placement = {}
        for key in order:
            split = assignment[key]
            for pk in item_ids[key]:
                placement[pk] = (split, next_position[split])
                next_position[split] += 1
    return placement


def freeze_items(release: Release, placement: dict, progress: Callable[[int], None]) -> dict:
    """Write the frozen record of every planned item, chunk by chunk; return what the card counts and the
    release checksum.

    The items and their options are read in id order, a range of ids at a time, as plain values: at
    100,000 items, model instances, per-chunk ``IN`` lists and sorting the whole project cost most of the
    time. On PostgreSQL the next chunk is read while this one is frozen (``read_ahead``). The records are
    written as they are made (``StreamedInsert``: on PostgreSQL one COPY on a second connection that the
    server ingests alongside, committed at the end; on SQLite a transaction every WRITE_CHUNK items, written
    by a thread on its own connection while the next ones are made, the write-ahead log copied into the file
    by another, ``wal_checkpoints_aside``). The checksum runs over the lines in split order, which is not id
    order: each chunk's lines go to a temporary file as they are made and are hashed from there at the end,
    in split order, so memory stays flat. The records are built in Python
    rather than by an ``INSERT … SELECT``: ``metadata`` must be Python's ``json.dumps(sort_keys=True)``
    text bit for bit, which neither SQLite's ``json()`` nor PostgreSQL's ``jsonb`` output reproduces.
    """
    by_class_split: dict[str, Counter] = defaultdict(Counter)
    answers: dict[str, Counter] = defaultdict(Counter)
    origins: dict[str, Counter] = defaultdict(Counter)  # natural / generated questions per class
    models = Counter()
    groups = set()
    slug = release.project.slug
    # An item's place in the checksum: the items of the splits before its own, then its position (positions
    # run from 0 without gaps in each split).
    sizes = Counter(split for split, _position in placement.values())
    base, before = {}, 0
    for split in SPLITS:
        base[split] = before
        before += sizes[split]
    starts = array("q", [-1]) * len(placement)
    lengths = array("q", [0]) * len(placement)
    offset = 0
    # The commit need not wait for the disk: the release is only ready once its last write (status READY)
    # commits, and that commit, durable, makes every earlier one durable too. A crash before it leaves a build
    # that is started again from nothing.
    frozen = StreamedInsert(
        ReleaseItem,
        ["item_id", "split", "position", "causal_class", "data"],
        constants={"release_id": release.pk},
        every=WRITE_CHUNK,
        on_progress=progress,
    )

    chunks = read_ahead(lambda: frozen_chunks(release.project, placement))
    with (
        tempfile.TemporaryFile() as spool,
        gc_paused(),
        wal_checkpoints_aside(),
        _abandoned_on_error(frozen),
        closing(chunks),
    ):
        for chunk in chunks:
            lines = []
            for row in chunk.rows:
                pk = row[PK]
                record = item_record(
                    row,
                    slug=slug,
                    options=chunk.options.get(pk, ()),
                    topics=chunk.topics,
                    groups=chunk.groups,
                    models_by_call=chunk.models_by_call,
                )
                line = canonical_line(record)
                split, position = placement[pk]
                rank = base[split] + position
                starts[rank] = offset
                lengths[rank] = len(line)
                offset += len(line)
                lines.append(line)
                causal_class = row[CAUSAL_CLASS]
                frozen.add((pk, split, position, causal_class, line[:-1].decode()))
                by_class_split[causal_class][split] += 1
                answer_by = record["answer_by"]
                answers[causal_class][answer_by or "none"] += 1
                origins[causal_class][record.get("origin") or "natural"] += 1
                if answer_by == "model":
                    models[(record["answer_model"], record["answer_prompt"], "answer")] += 1
                if row[GROUP_ID]:
                    groups.add(row[GROUP_ID])
            spool.write(b"".join(lines))
        frozen.close()
        spool.flush()
        descriptor = spool.fileno()
        digest = hashlib.sha256()
        for start, length in zip(starts, lengths):
            if start >= 0:  # an item deleted since the plan was made is simply not in the release
                digest.update(os.pread(descriptor, length, start))
    return {
        "by_class_split": by_class_split,
        "answers": answers,
        "origins": origins,
        "models": models,
        "groups": groups,
        "checksum": digest.hexdigest(),
    }


@contextmanager
def _abandoned_on_error(frozen: StreamedInsert):
    try:
        yield
    except BaseException:
        frozen.abandon()
        raise


class FrozenChunk(NamedTuple):
    """Items to freeze, with what ``item_record`` needs of their options, model calls, topics and groups."""

    rows: list[tuple]  # the values of FROZEN_VALUES, JSON fields as text
    options: dict[int, list[tuple]]  # (position, text, role, rationale) in letter order, by item id
    models_by_call: dict[int, dict]
    topics: dict[int, str]  # label by topic id
    groups: dict[int, tuple[str, str]]  # (external id, context) by group id


def frozen_chunks(project, placement: dict) -> Iterator[FrozenChunk]:
    """The planned items in id order, CHUNK at a time.

    Each chunk is read as a range of ids, which both databases walk along the primary key: no sort of the
    whole project (SQLite sorted all of it in memory, 100 MB at 100,000 items) and no list of ids. Topics and
    groups are read once per chunk for the ids it names, not joined to every item (a third of the server's
    time reading a chunk on PostgreSQL)."""
    # evaluation may read generation; imported here to keep startup light
    from generation.models import LLMCall

    items = Item.objects.filter(project=project).annotate(
        provenance_text=Cast("answer_provenance", TextField()),
        metadata_text=Cast("metadata", TextField()),
    )
    ids = sorted(placement)
    for begin in range(0, len(ids), CHUNK):
        low, high = ids[begin], ids[min(begin + CHUNK, len(ids)) - 1]
        rows = items.filter(pk__gte=low, pk__lte=high).order_by("pk").values_list(*FROZEN_VALUES)
        chunk = [row for row in rows if row[PK] in placement]  # the project's other items are passed over
        if not chunk:
            continue
        options = defaultdict(list)
        option_rows = (
            Option.objects.filter(item_id__gte=low, item_id__lte=high)
            .order_by("item_id", "position")
            .values_list("item_id", "position", "text", "role", "rationale")
        )
        for item_id, *option in option_rows:
            options[item_id].append(option)
        call_ids, topic_ids, group_ids = set(), set(), set()
        for row in chunk:
            topic_ids.add(row[TOPIC_ID])
            group_ids.add(row[GROUP_ID])
            provenance_text = row[PROVENANCE_TEXT]
            if row[ANSWER_BY] == "model" and '"call_id"' in provenance_text:  # only model answers name one
                provenance = json_value(provenance_text)
                if isinstance(provenance, dict) and isinstance(provenance.get("call_id"), int):
                    call_ids.add(provenance["call_id"])
        topics = dict(Topic.objects.filter(pk__in_many=topic_ids - {None}).values_list("pk", "label"))
        groups = ItemGroup.objects.filter(pk__in_many=group_ids - {None}).values_list(
            "pk", "external_id", "context"
        )
        groups = {pk: (external_id, context) for pk, external_id, context in groups}
        yield FrozenChunk(chunk, options, _calls(LLMCall, call_ids), topics, groups)


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
            {
                "class": label,
                "count": sum(tally["answers"][label].values()),
                "human": tally["answers"][label].get("human", 0),
                "model": tally["answers"][label].get("model", 0),
                "natural": tally.get("origins", {}).get(label, {}).get("natural", 0),
                "generated": tally.get("origins", {}).get(label, {}).get("generated", 0),
            }
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
    run = (
        TopicRun.objects.filter(project=project, applied_at__isnull=False)
        .order_by("-applied_at", "-pk")
        .values("pk", "embedding_model", "params", "n_topics")
        .first()
    )
    if run is None:
        return None
    return {
        "run": run["pk"],
        "embedding_model": run["embedding_model"],
        "topics": run["n_topics"],
        "clustering": (run["params"] or {}).get("used") or {},
    }


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
        model, prompt = answer_model_and_prompt(
            {**provenance, "call_id": call_id or provenance.get("call_id")}, calls
        )
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
