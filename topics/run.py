"""The topic-modelling job: embed the project's questions (reusing stored vectors), cluster the
natural ones, describe each cluster by its c-TF-IDF words, save the topics, list near-duplicates.

``topic_run_create`` checks the request and queues the run; the Celery task claims it and calls
``topic_run_execute``. The first run's topics become the project's at the end, in one transaction; a later
run is a proposal shown beside the current topics, which the curator applies or discards
(``topics.proposal``): a run never replaces a curator's topics by itself.
"""

import logging
import os
import time
from collections import Counter
from dataclasses import dataclass
from datetime import timedelta

import numpy as np
from django.db import transaction
from django.db.models import Count
from django.utils import timezone

from annotation.models import Item, Project
from core.background import work_claim, work_fail_stale, work_owner_token
from generation.services.jobs import JobInvalid
from generation.services.work import chunks

from . import clustering, ctfidf
from .embeddings import (
    NAMED_MODELS,
    EmbeddingsUnavailable,
    embed_and_store,
    embedder_from_settings,
    stored_vectors,
)
from .models import NearDuplicate, Topic, TopicRun

logger = logging.getLogger(__name__)
Status = TopicRun.Status
Stage = TopicRun.Stage
RESIDUAL_LABEL = "Residual"
TOP_WORDS = 10
MAX_MAP_POINTS = 20_000
# A run silent this long lost its worker (or was never picked up): it fails, and a new run may start.
STALE_AFTER = timedelta(minutes=15)
# A question HDBSCAN leaves out joins the nearest topic when this similar to its centre (1: none joins).
# Measured on short Portuguese and English questions of known themes (benchmarks/topics.py), it takes the
# residual from 23-40 % to 7-17 % of the questions and raises the adjusted Rand index against the themes.
RESIDUAL_SIMILARITY = 0.5


@dataclass(frozen=True)
class TopicParams:
    """Empty ``min_cluster_size`` / ``min_samples``: scaled to the number of questions (``clustering.auto_sizes``)."""

    min_cluster_size: int | None = None
    min_samples: int | None = None
    dimensions: int = 10
    duplicate_threshold: float = 0.95
    residual_similarity: float = RESIDUAL_SIMILARITY
    seed_words: dict | None = None  # {"Education": ["university", "job"], ...}

    def check(self) -> dict[str, str]:
        errors = {}
        if self.min_cluster_size is not None and (
            not isinstance(self.min_cluster_size, int) or not 2 <= self.min_cluster_size <= 10_000
        ):
            errors["min_cluster_size"] = "use a whole number from 2 to 10,000, or leave it empty"
        if self.min_samples is not None and (
            not isinstance(self.min_samples, int) or not 1 <= self.min_samples <= 10_000
        ):
            errors["min_samples"] = "use a whole number from 1 to 10,000, or leave it empty"
        if not isinstance(self.dimensions, int) or not 0 <= self.dimensions <= 1000:
            errors["dimensions"] = "use 0 (no reduction) to 1,000"
        if (
            not isinstance(self.duplicate_threshold, (int, float))
            or not 0.8 <= self.duplicate_threshold <= 1.0
        ):
            errors["duplicate_threshold"] = "use a cosine similarity from 0.8 to 1"
        if (
            not isinstance(self.residual_similarity, (int, float))
            or not 0.0 <= self.residual_similarity <= 1.0
        ):
            errors["residual_similarity"] = "use a cosine similarity from 0 to 1 (1: none joins a topic)"
        return errors

    def as_dict(self) -> dict:
        return {
            "min_cluster_size": self.min_cluster_size,
            "min_samples": self.min_samples,
            "dimensions": self.dimensions,
            "duplicate_threshold": self.duplicate_threshold,
            "residual_similarity": self.residual_similarity,
            "seed_words": self.seed_words or {},
        }


def seed_words_parse(text: str) -> dict[str, list[str]]:
    """Lines like ``Education: university, job, study`` → {"Education": ["university", "job", "study"]}.

    A line without a label is named after its first word. Raises ``ValueError`` naming the bad line.
    """
    seeds: dict[str, list[str]] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        line = line.strip()
        if not line:
            continue
        label, _colon, words_text = line.rpartition(":") if ":" in line else ("", "", line)
        words = [word.strip().lower() for word in words_text.split(",") if word.strip()]
        if not words:
            raise ValueError(f"line {number}: no seed words after the label")
        label = label.strip() or words[0]
        if len(label) > 200:
            raise ValueError(f"line {number}: the label is longer than 200 characters")
        seeds.setdefault(label, []).extend(word for word in words if word not in seeds.get(label, []))
    return seeds


def seed_words_format(seeds: dict[str, list[str]]) -> str:
    return "\n".join(f"{label}: {', '.join(words)}" for label, words in (seeds or {}).items())


def topic_run_create(
    *,
    project: Project,
    user=None,
    params: TopicParams | None = None,
    embedding_model: str | None = None,
    enqueue: bool = True,
) -> TopicRun:
    """Check the parameters, store the run and (after commit) hand it to a worker. Raises ``JobInvalid``.

    ``embedding_model`` (None: leave the project's as it is) becomes the project's local embedding model."""
    params = params or TopicParams()
    topic_runs_fail_stale(project=project)
    errors = params.check()
    if embedding_model:
        embedding_model = embedding_model.strip()
        if embedding_model not in NAMED_MODELS and not os.path.isdir(embedding_model):
            errors["embedding_model"] = (
                f"{embedding_model!r} is neither {', '.join(NAMED_MODELS)} nor a directory on the server"
            )
    if not project.items.filter(origin=Item.Origin.NATURAL).exists():
        errors["project"] = "the project has no imported questions to cluster yet"
    if TopicRun.objects.filter(project=project, status__in=(Status.QUEUED, Status.RUNNING)).exists():
        errors["project"] = "a topic run of this project is under way; wait for it to finish"
    if errors:
        raise JobInvalid(errors)
    with transaction.atomic():
        if embedding_model is not None and embedding_model != project.embedding_model:
            project.embedding_model = embedding_model
            project.save(update_fields=["embedding_model"])
        run = TopicRun.objects.create(
            project=project, created_by=user, params=params.as_dict(), heartbeat_at=timezone.now()
        )
        if enqueue:
            transaction.on_commit(lambda: topic_run_enqueue(run.pk), robust=True)
    return run


def topic_runs_fail_stale(*, project: Project) -> int:
    """Fail the project's runs that stopped giving signs of life (their worker died or never came)."""
    return len(topic_runs_fail_stale_everywhere(TopicRun.objects.filter(project=project)))


def topic_runs_fail_stale_everywhere(rows=None) -> list[int]:
    """Fail every run (of ``rows``, default all) silent for ``STALE_AFTER``; the periodic sweep calls this."""
    return work_fail_stale(
        rows if rows is not None else TopicRun.objects.all(),
        stale_before=timezone.now() - STALE_AFTER,
        statuses=(Status.QUEUED, Status.RUNNING),
        failed=Status.FAILED,
        error="the run stopped: its worker died or never picked it up; start it again",
    )


def topic_run_enqueue(run_id: int) -> None:
    from .tasks import run_topic_model

    run_topic_model.delay(run_id)


def topic_run_claim(*, run_id: int) -> bool:
    return work_claim(
        TopicRun, pk=run_id, owner=work_owner_token(), queued=Status.QUEUED, running=Status.RUNNING
    )


def topic_run_execute(*, run_id: int, embedder=None) -> TopicRun:
    """Do a claimed run to the end; a failure is recorded on the run with its reason, never half-saved."""
    run = TopicRun.objects.select_related("project").get(pk=run_id)
    try:
        embedder = embedder or embedder_from_settings(run.project)
        _execute(run, embedder)
    except (EmbeddingsUnavailable, ValueError, RuntimeError) as exc:
        _fail(run, str(exc))
    except Exception as exc:
        _fail(run, f"internal error: {type(exc).__name__}: {exc}")
        raise
    run.refresh_from_db()
    return run


def _fail(run: TopicRun, reason: str) -> None:
    logger.warning("topic run %s failed: %s", run.pk, reason)
    TopicRun.objects.filter(pk=run.pk).update(status=Status.FAILED, error=reason, finished_at=timezone.now())


def _update(run: TopicRun, **fields) -> None:
    fields["heartbeat_at"] = timezone.now()
    for name, value in fields.items():
        setattr(run, name, value)
    TopicRun.objects.filter(pk=run.pk).update(**fields)


def _execute(run: TopicRun, embedder) -> None:
    project, params = run.project, run.params
    timings: dict[str, float] = {}
    rows = list(
        project.items.exclude(status=Item.Status.REJECTED)
        .order_by("pk")
        .values_list("pk", "text_key", "question", "origin")
    )
    if not any(origin == Item.Origin.NATURAL for *_rest, origin in rows):
        raise ValueError("the project has no imported questions to cluster")

    started = time.monotonic()
    stored = stored_vectors(
        project=project, items=[(pk, key) for pk, key, _q, _o in rows], model_name=embedder.name
    )
    missing = [(pk, key, question) for pk, key, question, _o in rows if pk not in stored]
    _update(
        run,
        stage=Stage.EMBEDDING,
        embedding_model=embedder.name,
        total=len(missing),
        done=0,
        reused=len(stored),
    )
    vectors = dict(stored)
    vectors.update(
        embed_and_store(
            items=missing,
            embedder=embedder,
            progress=lambda n: _update(run, done=n),
            beat=lambda: _update(run),
        )
    )
    timings["embedding"] = round(time.monotonic() - started, 3)

    started = time.monotonic()
    _update(run, stage=Stage.CLUSTERING)
    natural = [(pk, question) for pk, _key, question, origin in rows if origin == Item.Origin.NATURAL]
    others = [(pk, question) for pk, _key, question, origin in rows if origin != Item.Origin.NATURAL]
    natural_vectors = np.stack([vectors[pk] for pk, _q in natural])
    min_cluster_size, min_samples = clustering.auto_sizes(
        len(natural), min_cluster_size=params.get("min_cluster_size"), min_samples=params.get("min_samples")
    )
    found = clustering.cluster(
        natural_vectors,
        min_cluster_size=min_cluster_size,
        min_samples=min_samples,
        dimensions=params.get("dimensions", 10),
    )
    params = {
        **params,
        "used": {
            "min_cluster_size": min_cluster_size,
            "min_samples": min_samples,
            "dimensions": found.dimensions,
            "questions": len(natural),
            # The share of the clustered questions one cluster went beyond, when HDBSCAN's finest were kept.
            "finest_above_percent": round(100 * clustering.MIXED_SHARE) if found.finest else None,
        },
    }
    _update(run, params=params)
    other_vectors = np.stack([vectors[pk] for pk, _q in others]) if others else np.zeros((0, 1))
    other_labels = clustering.assign_nearest(other_vectors, natural_vectors, found.labels) if others else []
    placed = clustering.reassign_residual(
        natural_vectors, found.labels, min_similarity=params.get("residual_similarity", RESIDUAL_SIMILARITY)
    )
    labels = {pk: int(label) for (pk, _q), label in zip(natural, placed)}
    labels.update({pk: int(label) for (pk, _q), label in zip(others, other_labels)})
    all_ids = [pk for pk, *_rest in rows]
    all_vectors = np.stack([vectors[pk] for pk in all_ids])
    points = clustering.map_2d(all_vectors)
    pairs = clustering.near_duplicates(all_vectors, threshold=params.get("duplicate_threshold", 0.95))
    questions_in_order = [question for _pk, _key, question, _o in rows]
    found_pairs = {(i, j) for i, j, _s in pairs}
    pairs += [pair for pair in clustering.same_text_pairs(questions_in_order) if pair[:2] not in found_pairs]
    timings["clustering"] = round(time.monotonic() - started, 3)

    started = time.monotonic()
    _update(run, stage=Stage.DESCRIBING)
    questions = {pk: question for pk, _key, question, _o in rows}
    words = ctfidf.top_words([questions[pk] for pk in all_ids], [labels[pk] for pk in all_ids], n=TOP_WORDS)
    seeds = seed_matches(questions, labels, params.get("seed_words") or {})
    naming = ctfidf.label_words([questions[pk] for pk in all_ids], [labels[pk] for pk in all_ids], words)
    timings["describing"] = round(time.monotonic() - started, 3)

    started = time.monotonic()
    _update(run, stage=Stage.SAVING)
    map_points = [
        [pk, round(float(x), 4), round(float(y), 4), labels[pk]] for pk, (x, y) in zip(all_ids, points)
    ][:MAX_MAP_POINTS]
    proposal = {
        "labels": {str(pk): label for pk, label in labels.items()},
        "words": {
            str(cluster): [[word, round(weight, 6)] for word, weight in described]
            for cluster, described in words.items()
        },
        "seeds": {str(cluster): [list(match) for match in matches] for cluster, matches in seeds.items()},
        "label_words": {
            str(cluster): [[word, round(share, 6)] for word, share in chosen]
            for cluster, chosen in naming.items()
        },
    }
    with transaction.atomic():
        # A project without topics has nothing to replace: the run's are its topics at once. Otherwise (topics
        # of an earlier run or of the import file, maybe named and selected by a curator) the run is a proposal
        # the curator compares with the current topics and applies or discards (``topics.proposal``).
        first = not Topic.objects.filter(project=project).exists()
        if first:
            save_topics(project, labels, words, seeds, naming=naming)
        n_duplicates = _save_near_duplicates(project, [(all_ids[i], all_ids[j], s) for i, j, s in pairs])
        timings["saving"] = round(time.monotonic() - started, 3)
        _update(
            run,
            status=Status.SUCCEEDED,
            stage=Stage.DONE,
            finished_at=timezone.now(),
            timings=timings,
            n_topics=sum(1 for cluster in set(labels.values()) if cluster != clustering.RESIDUAL),
            n_residual=sum(1 for label in labels.values() if label == clustering.RESIDUAL),
            n_duplicates=n_duplicates,
            map_points=map_points,
            proposal=proposal,
            applied_at=timezone.now() if first else None,
            replaced={"topics": []} if first else {},
        )


def proposal_of(run: TopicRun) -> tuple[dict[int, int], dict, dict]:
    """The run's (labels, words, seeds) as ``save_topics`` takes them."""
    proposal = run.proposal or {}
    labels = {int(pk): int(cluster) for pk, cluster in proposal.get("labels", {}).items()}
    words = {
        int(cluster): [(word, weight) for word, weight in described]
        for cluster, described in proposal.get("words", {}).items()
    }
    seeds = {
        int(cluster): [tuple(match) for match in matches]
        for cluster, matches in proposal.get("seeds", {}).items()
    }
    return labels, words, seeds


def label_words_of(run: TopicRun) -> dict[int, list[tuple[str, float]]]:
    """The words the run names each cluster after (``ctfidf.label_words``); runs without them use their
    top words."""
    return {
        int(cluster): [(word, share) for word, share in chosen]
        for cluster, chosen in (run.proposal or {}).get("label_words", {}).items()
    }


def seed_matches(
    questions: dict[int, str], labels: dict[int, int], seeds: dict[str, list[str]]
) -> dict[int, list[tuple[str, str, int]]]:
    """Per cluster, the seed words its questions contain: [(seed topic, word, questions with it)], most first."""
    if not seeds:
        return {}
    counts: dict[int, dict[tuple[str, str], int]] = {}
    for pk, question in questions.items():
        text = question.lower()
        tokens = ctfidf.words_of(question)
        for seed_label, seed_list in seeds.items():
            for word in seed_list:
                if (word in text) if " " in word else (word in tokens):
                    cell = counts.setdefault(labels[pk], {})
                    cell[seed_label, word] = cell.get((seed_label, word), 0) + 1
    return {
        cluster: sorted(
            ((label, word, n) for (label, word), n in cell.items()), key=lambda row: (-row[2], row[1])
        )
        for cluster, cell in counts.items()
    }


def seed_names(seeds: dict[int, list[tuple[str, str, int]]], sizes: dict[int, int]) -> dict[int, str]:
    """Each seed topic names one cluster at most: the one where its words cover the largest share of the
    questions (the best pairs first, each cluster and each seed topic used once). The residual gets none."""
    shares = []
    for cluster, matches in seeds.items():
        if cluster == clustering.RESIDUAL:
            continue
        totals: dict[str, int] = {}
        for seed_label, _word, n in matches:
            totals[seed_label] = totals.get(seed_label, 0) + n
        shares += [
            (n / max(sizes.get(cluster, 1), 1), n, seed_label, cluster) for seed_label, n in totals.items()
        ]
    named, used = {}, set()
    for _share, _n, seed_label, cluster in sorted(shares, key=lambda row: (-row[0], -row[1], row[2], row[3])):
        if cluster not in named and seed_label not in used:
            named[cluster] = seed_label
            used.add(seed_label)
    return named


def _cluster_label(cluster: int, words: list[tuple[str, float]], seed_name: str | None) -> str:
    if cluster == clustering.RESIDUAL:
        return RESIDUAL_LABEL
    if seed_name:
        return seed_name
    return " · ".join(word for word, _weight in words[:3]) or f"Topic {cluster}"


def carried_over(project: Project, labels: dict[int, int]) -> dict[int, Topic]:
    """For each new cluster, the current topic (modelled, or from the import file) holding mostly the same
    questions: at least half of the cluster's and half of the topic's. Its name, selection and class targets
    (a curator's work) pass to the cluster; each current topic passes to one cluster at most."""
    earlier = dict(Item.objects.filter(project=project, topic__isnull=False).values_list("pk", "topic_id"))
    if not earlier:
        return {}
    earlier_sizes, new_sizes = Counter(earlier.values()), Counter(labels.values())
    shared = Counter((labels[pk], topic_id) for pk, topic_id in earlier.items() if pk in labels)
    topics = Topic.objects.in_bulk(list(earlier_sizes))
    carried, used = {}, set()
    # Largest overlaps first, ties broken by cluster and topic: the same topics carry over however the
    # database happens to return the items, so the proposal's table and its application always agree.
    for (cluster, topic_id), n in sorted(shared.items(), key=lambda pair: (-pair[1], pair[0])):
        topic = topics[topic_id]
        if (
            cluster in carried
            or topic_id in used
            or topic.is_residual != (cluster == clustering.RESIDUAL)
            or 2 * n < new_sizes[cluster]
            or 2 * n < earlier_sizes[topic_id]
        ):
            continue
        carried[cluster] = topic
        used.add(topic_id)
    return carried


def present_labels(project: Project, labels: dict[int, int]) -> dict[int, int]:
    """The run's labels of the questions still in the project (a question deleted since the run found it goes)."""
    present = set(project.items.values_list("pk", flat=True))
    return {pk: label for pk, label in labels.items() if pk in present}


def save_topics(
    project: Project,
    labels: dict[int, int],
    words: dict,
    seeds: dict,
    carried: dict[int, Topic] | None = None,
    naming: dict | None = None,
) -> int:
    """Replace the project's modelled topics by these clusters, and put every item in its topic.

    A cluster that holds mostly the questions of an earlier topic keeps that topic's name, selection
    and class targets (see ``carried_over``, or ``carried`` as a proposal's comparison showed it), so
    clustering again does not undo a curator's work."""
    labels = present_labels(project, labels)
    if carried is None:
        carried = carried_over(project, labels)
    kept = {topic.pk for topic in carried.values()}
    # A carried topic is kept as it is (the same row: its name, selection, targets and whatever points to
    # it); the other modelled topics go.
    Topic.objects.filter(project=project, cluster__isnull=False).exclude(pk__in=kept).delete()
    sizes: dict[int, int] = {}
    for label in labels.values():
        sizes[label] = sizes.get(label, 0) + 1
    taken = set(Topic.objects.filter(project=project).values_list("label", flat=True))
    named = seed_names(seeds, sizes)
    created = {}
    for cluster in sorted(sizes, key=lambda c: (c == clustering.RESIDUAL, c)):
        described = {
            "cluster": cluster,
            "size": sizes[cluster],
            "is_residual": cluster == clustering.RESIDUAL,
            "top_words": []
            if cluster == clustering.RESIDUAL
            else [word for word, _weight in words.get(cluster, [])],
            "seed_words": [word for _label, word, _n in seeds.get(cluster, [])],
        }
        earlier = carried.get(cluster)
        if earlier is not None:
            Topic.objects.filter(pk=earlier.pk).update(**described)
            created[cluster] = earlier
            continue
        base = _cluster_label(
            cluster, (naming or {}).get(cluster) or words.get(cluster, []), named.get(cluster)
        )
        label, n = base[:190], 2
        while label in taken:
            label, n = f"{base[:190]} ({n})", n + 1
        taken.add(label)
        created[cluster] = Topic.objects.create(project=project, label=label, **described)
    by_topic: dict[int, list[int]] = {}
    for pk, label in labels.items():
        by_topic.setdefault(created[label].pk, []).append(pk)
    for topic_id, ids in by_topic.items():
        for chunk in chunks(ids):
            Item.objects.filter(project=project, pk__in=chunk).update(topic_id=topic_id)
    # Topics left without questions (labels from the import file, all now in clusters) go.
    Topic.objects.filter(project=project, cluster__isnull=True).annotate(n=Count("items")).filter(
        n=0
    ).delete()
    return sum(1 for cluster in created if cluster != clustering.RESIDUAL)


def _save_near_duplicates(project: Project, pairs: list[tuple[int, int, float]]) -> int:
    """Upsert the pairs found; a pair the curator decided keeps its decision; open pairs no longer found go."""
    found = {(min(a, b), max(a, b)): similarity for a, b, similarity in pairs}
    existing = {
        (first, second): pk
        for pk, first, second in NearDuplicate.objects.filter(project=project).values_list(
            "pk", "first_id", "second_id"
        )
    }
    stale = [pk for pair, pk in existing.items() if pair not in found]
    for chunk in chunks(stale):
        NearDuplicate.objects.filter(pk__in=chunk, status=NearDuplicate.Status.OPEN).delete()
    NearDuplicate.objects.bulk_create(
        [
            NearDuplicate(project=project, first_id=a, second_id=b, similarity=s)
            for (a, b), s in found.items()
        ],
        update_conflicts=True,
        unique_fields=["first", "second"],
        update_fields=["similarity"],
    )
    return NearDuplicate.objects.filter(project=project, status=NearDuplicate.Status.OPEN).count()


def latest_run(project: Project) -> TopicRun | None:
    """The project's last run, without its map (read only where the map is drawn)."""
    return TopicRun.objects.filter(project=project).defer("map_points").order_by("-created_at", "-pk").first()
