"""A topic run as a proposal: compared with the project's current topics, then applied or discarded.

A run never replaces a curator's topics by itself (only in a project without topics is a run applied at once). ``proposal_compare`` says, for each proposed topic, which current topic holds most of its
questions and what carries over from it (name, selection, class targets); and which current topics would go.
``topic_run_apply`` makes the proposal the project's topics; the run applied before stays, so applying it
again goes back.
"""

from collections import Counter
from dataclasses import dataclass, field

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from annotation.models import Item, Topic

from ..models import TopicRun
from . import clustering
from .run import _cluster_label, carried_over, proposal_of, save_topics, seed_names


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
    current_topic = dict(
        Item.objects.filter(project=project, pk__in=list(labels)).values_list("pk", "topic_id")
    )
    current = list(Topic.objects.filter(project=project).order_by("is_residual", "-size", "label"))
    by_id = {topic.pk: topic for topic in current}
    carried = carried_over(project, labels)
    sizes = Counter(labels.values())
    named = seed_names(seeds, sizes)
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
                else _cluster_label(cluster, words.get(cluster, []), named.get(cluster)),
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
        run=run, proposed=proposed, dropped=dropped, moved=moved, questions=len(labels), current=current
    )


@transaction.atomic
def topic_run_apply(*, run: TopicRun, curator) -> TopicRun:
    """Make the run's topics the project's (names, selections and targets carried over where topics match).

    Any succeeded run may be applied, an earlier one too: that is how a curator goes back."""
    run = TopicRun.objects.select_for_update().get(pk=run.pk)
    if run.status != TopicRun.Status.SUCCEEDED or not run.proposal:
        raise ValidationError(_("Only a finished topic run can be applied."))
    labels, words, seeds = proposal_of(run)
    save_topics(run.project, labels, words, seeds)
    now = timezone.now()
    TopicRun.objects.filter(pk=run.pk).update(applied_at=now, discarded_at=None)
    run.applied_at, run.discarded_at = now, None
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
