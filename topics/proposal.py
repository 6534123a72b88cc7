"""A topic run as a proposal: compared with the project's current topics, then applied or discarded.

A run never replaces a curator's topics by itself (only in a project without topics is a run applied at once). ``proposal_compare`` says, for each proposed topic, which current topic holds most of its
questions and what carries over from it (name, selection, class targets); and which current topics would go.
``topic_run_apply`` makes the proposal the project's topics exactly as the comparison showed them (a
comparison that no longer holds is refused), after keeping the topics it replaces on the run, so
``topic_run_undo`` puts them back as they were: names, selections, targets and which question is in which,
the first time too (topics from the import file or made by hand). The run applied before also stays, so
applying it again goes back.
"""

import hashlib
import json
import secrets
from collections import Counter
from dataclasses import dataclass, field

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from annotation.models import Item

from . import clustering
from .models import Topic, TopicRun
from .run import (
    _cluster_label,
    carried_over,
    label_words_of,
    present_labels,
    proposal_of,
    save_topics,
    seed_names,
)


@dataclass
class ProposedTopic:
    cluster: int
    label: str
    size: int
    top_words: list[str]
    carried_from: Topic | None  # the current topic whose name, selection and targets it keeps
    mostly_from: Topic | None  # the current topic holding most of its questions
    shared: int  # how many of its questions are in ``mostly_from`` now


@dataclass
class Comparison:
    run: TopicRun
    proposed: list[ProposedTopic]
    dropped: list[Topic]  # current topics that nothing carries over
    moved: int  # questions whose topic would change
    questions: int
    current: list[Topic] = field(default_factory=list)
    carried: dict[int, Topic] = field(default_factory=dict)  # cluster -> the current topic it keeps

    @property
    def fingerprint(self) -> str:
        """What the table says, in a few characters: the apply form sends it back, and a comparison that
        changed in between (a topic renamed, selected or regrouped meanwhile) is refused, not applied."""
        said = {
            "proposed": [
                [
                    topic.cluster,
                    topic.label,
                    topic.size,
                    topic.carried_from and topic.carried_from.pk,
                    topic.carried_from and topic.carried_from.selected,
                    topic.carried_from and topic.carried_from.class_targets,
                ]
                for topic in self.proposed
            ],
            "dropped": [[topic.pk, topic.label, topic.selected] for topic in self.dropped],
            "moved": self.moved,
        }
        return hashlib.sha256(json.dumps(said, sort_keys=True, default=str).encode()).hexdigest()[:16]


def pending_proposal(project) -> TopicRun | None:
    """The project's latest succeeded run if it waits for the curator (neither applied nor discarded)."""
    run = (
        TopicRun.objects.filter(project=project, status=TopicRun.Status.SUCCEEDED)
        .defer("map_points")
        .order_by("-created_at", "-pk")
        .first()
    )
    if run is None or run.applied_at or run.discarded_at or not run.proposal:
        return None
    return run


def proposal_compare(run: TopicRun) -> Comparison:
    """What applying the run would change, next to the current topics."""
    labels, words, seeds = proposal_of(run)
    project = run.project
    labels = present_labels(project, labels)
    current_topic = dict(
        Item.objects.filter(project=project, pk__in=list(labels)).values_list("pk", "topic_id")
    )
    current = list(Topic.objects.filter(project=project).order_by("is_residual", "-size", "label"))
    by_id = {topic.pk: topic for topic in current}
    carried = carried_over(project, labels)
    sizes = Counter(labels.values())
    named = seed_names(seeds, sizes)
    naming = label_words_of(run)
    proposed = []
    for cluster in sorted(sizes, key=lambda c: (c == clustering.RESIDUAL, c)):
        members = [pk for pk, label in labels.items() if label == cluster]
        holders = Counter(current_topic.get(pk) for pk in members if current_topic.get(pk))
        holder, shared = holders.most_common(1)[0] if holders else (None, 0)
        earlier = carried.get(cluster)
        proposed.append(
            ProposedTopic(
                cluster=cluster,
                size=sizes[cluster],
                label=earlier.label
                if earlier
                else _cluster_label(
                    cluster, naming.get(cluster) or words.get(cluster, []), named.get(cluster)
                ),
                top_words=[word for word, _weight in words.get(cluster, [])][:6]
                if cluster != clustering.RESIDUAL
                else [],
                carried_from=earlier,
                mostly_from=by_id.get(holder),
                shared=shared,
            )
        )
    kept = {topic.pk for topic in carried.values()}
    dropped = [topic for topic in current if topic.pk not in kept]
    # Questions that would change topic: those whose current topic does not carry over to their new cluster.
    moved = sum(
        1
        for pk, cluster in labels.items()
        if not (carried.get(cluster) and carried[cluster].pk == current_topic.get(pk))
    )
    return Comparison(
        run=run,
        proposed=proposed,
        dropped=dropped,
        moved=moved,
        questions=len(labels),
        current=current,
        carried=carried,
    )


TOPIC_FIELDS = (
    "label",
    "cluster",
    "size",
    "is_residual",
    "selected",
    "class_targets",
    "top_words",
    "seed_words",
)


def topics_snapshot(project) -> dict:
    """The project's topics exactly as they are, and which question is in which (JSON)."""
    topics = [
        {"pk": pk, **dict(zip(TOPIC_FIELDS, values))}
        for pk, *values in Topic.objects.filter(project=project)
        .order_by("pk")
        .values_list("pk", *TOPIC_FIELDS)
    ]
    members: dict[int, list[int]] = {}
    for item_id, topic_id in Item.objects.filter(project=project, topic__isnull=False).values_list(
        "pk", "topic_id"
    ):
        members.setdefault(topic_id, []).append(item_id)
    for topic in topics:
        topic["items"] = sorted(members.get(topic["pk"], []))
    return {"topics": topics}


def topics_restore(project, snapshot: dict) -> None:
    """Make the project's topics the snapshot's again. A topic still there keeps its row (and so whatever
    points to it); one deleted since is made again; questions deleted since stay deleted; questions added
    since the snapshot keep no topic of it."""
    wanted = snapshot.get("topics", [])
    existing = set(Topic.objects.filter(project=project).values_list("pk", flat=True))
    keep = {topic["pk"] for topic in wanted} & existing
    Topic.objects.filter(project=project).exclude(pk__in=keep).delete()
    # Labels are unique in a project: clear the kept topics' labels before any is written back.
    token = secrets.token_hex(4)
    for pk in keep:
        Topic.objects.filter(pk=pk).update(label=f"restoring #{pk} {token}")
    Item.objects.filter(project=project).update(topic=None)
    for topic in wanted:
        fields = {name: topic[name] for name in TOPIC_FIELDS}
        if topic["pk"] in keep:
            Topic.objects.filter(pk=topic["pk"]).update(**fields)
            topic_id = topic["pk"]
        else:
            topic_id = Topic.objects.create(project=project, **fields).pk
        ids = topic["items"]
        for start in range(0, len(ids), 5000):
            Item.objects.filter(project=project, pk__in=ids[start : start + 5000]).update(topic_id=topic_id)


@transaction.atomic
def topic_run_apply(*, run: TopicRun, curator, expected: str | None = None) -> TopicRun:
    """Make the run's topics the project's, carrying over names, selections and targets exactly as
    ``proposal_compare`` shows them. ``expected`` is the fingerprint of the comparison the curator saw: if
    the topics changed since, nothing is applied and the curator is asked to look again.

    Any succeeded run may be applied, an earlier one too: that is how a curator goes back. The topics it
    replaces are kept on the run, for ``topic_run_undo``."""
    run = TopicRun.objects.select_for_update().get(pk=run.pk)
    if run.status != TopicRun.Status.SUCCEEDED or not run.proposal:
        raise ValidationError(_("Only a finished topic run can be applied."))
    comparison = proposal_compare(run)
    if expected is not None and expected != comparison.fingerprint:
        raise ValidationError(
            _(
                "The topics changed since this proposal was shown to you, so it would no longer do what its "
                "table said. Nothing was applied: look at the proposal again."
            )
        )
    replaced = topics_snapshot(run.project)
    labels, words, seeds = proposal_of(run)
    save_topics(run.project, labels, words, seeds, carried=comparison.carried, naming=label_words_of(run))
    now = timezone.now()
    TopicRun.objects.filter(pk=run.pk).update(applied_at=now, discarded_at=None, replaced=replaced)
    run.applied_at, run.discarded_at, run.replaced = now, None, replaced
    return run


def undoable_run(project) -> TopicRun | None:
    """The run applied last, if the topics it replaced were kept: applying it can be undone."""
    run = (
        TopicRun.objects.filter(project=project, applied_at__isnull=False)
        .defer("map_points", "proposal")
        .order_by("-applied_at", "-pk")
        .first()
    )
    return run if run is not None and run.replaced else None


@transaction.atomic
def topic_run_undo(*, run: TopicRun, curator) -> TopicRun:
    """Put back the topics the run replaced when it was applied; the run becomes a proposal again."""
    run = TopicRun.objects.select_for_update().get(pk=run.pk)
    if undoable_run(run.project) != run:
        raise ValidationError(_("Only the topics applied last can be undone."))
    topics_restore(run.project, run.replaced)
    TopicRun.objects.filter(pk=run.pk).update(applied_at=None, discarded_at=None, replaced={})
    run.applied_at, run.discarded_at, run.replaced = None, None, {}
    return run


def topic_run_discard(*, run: TopicRun, curator) -> TopicRun:
    """Leave the current topics as they are; the run stays listed and can still be applied later."""
    if run.status != TopicRun.Status.SUCCEEDED or run.applied_at:
        raise ValidationError(_("Only a finished topic run that was not applied can be discarded."))
    run.discarded_at = timezone.now()
    TopicRun.objects.filter(pk=run.pk).update(discarded_at=run.discarded_at)
    return run


def applied_runs(project, limit: int = 5) -> list[TopicRun]:
    """Runs whose topics were applied, latest first: the way back."""
    return list(
        TopicRun.objects.filter(project=project, applied_at__isnull=False)
        .defer("map_points", "proposal")
        .order_by("-applied_at", "-pk")[:limit]
    )
