"""Reads for the topics and class-balance pages: a few grouped queries, never one per topic or item."""

from django.db.models import Count, F, Window
from django.db.models.functions import RowNumber

from annotation.charts import scatter_chart
from annotation.models import Item, Project

from .models import NearDuplicate, Topic, TopicRun

EXAMPLES_PER_TOPIC = 5


def topics_overview(project: Project) -> list[Topic]:
    """The project's topics, largest first (the residual last), each with ``class_counts`` and ``examples``."""
    topics = list(Topic.objects.filter(project=project).order_by("is_residual", "-size", "label"))
    counts: dict[int, dict[str, int]] = {}
    for topic_id, causal_class, n in (
        Item.objects.filter(project=project, topic__isnull=False)
        .values_list("topic_id", "causal_class")
        .annotate(n=Count("pk"))
        .order_by()
    ):
        counts.setdefault(topic_id, {})[causal_class or "—"] = n
    examples: dict[int, list[Item]] = {}
    ranked = (
        Item.objects.filter(project=project, topic__isnull=False)
        .annotate(rank=Window(RowNumber(), partition_by=[F("topic_id")], order_by=F("pk").asc()))
        .filter(rank__lte=EXAMPLES_PER_TOPIC)
        .only("pk", "question", "causal_class", "topic_id")
    )
    for item in ranked:
        examples.setdefault(item.topic_id, []).append(item)
    labels = list(project.label_set)
    for topic in topics:
        by_class = counts.get(topic.pk, {})
        topic.class_counts = [(label, by_class.get(label, 0)) for label in labels] + [
            (label, n) for label, n in sorted(by_class.items()) if label not in labels
        ]
        topic.examples = examples.get(topic.pk, [])
    return topics


def topic_map(project: Project, run: TopicRun | None, topics: list[Topic]) -> dict | None:
    """The last run's 2-D map, each question coloured by the topic it is in now (after merges and moves)."""
    if run is None or not run.map_points:
        return None
    current = dict(Item.objects.filter(project=project).values_list("pk", "topic_id").order_by())
    groups = {topic.pk: topic.label for topic in topics if not topic.is_residual}
    points = [(x, y, current.get(pk)) for pk, x, y, _cluster in run.map_points if pk in current]
    return scatter_chart(points, groups=groups)


def open_near_duplicates(project: Project, limit: int = 100):
    return (
        NearDuplicate.objects.filter(project=project, status=NearDuplicate.Status.OPEN)
        .select_related("first", "second")
        .order_by("-similarity", "pk")[:limit]
    )


def topic_items(topic: Topic, limit: int = 200):
    return topic.items.order_by("pk").only("pk", "question", "causal_class", "status", "origin", "topic_id")[
        :limit
    ]
