"""A curator's changes to topics: rename, merge, move a question, select for annotation, targets.
Every door (pages, API, commands) calls these. (Dropping a question as a near-duplicate of another closes
it: ``annotation.services.item_close(duplicate_of=...)``.)

Topics themselves come from the topic-modelling run (``run``, ``proposal``) or from the import file.
"""

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Count
from django.utils import timezone
from django.utils.translation import gettext as _

from annotation.models import Item, Project
from annotation.team import class_targets_check

from .models import Topic


def topic_sizes_refresh(*, project: Project) -> None:
    """Recount each topic's size from its items (after a merge or a move)."""
    counts = dict(
        Item.objects.filter(project=project, topic__isnull=False)
        .values_list("topic_id")
        .annotate(n=Count("pk"))
        .order_by()
    )
    for topic_id, size in Topic.objects.filter(project=project).values_list("pk", "size"):
        if size != counts.get(topic_id, 0):
            Topic.objects.filter(pk=topic_id).update(size=counts.get(topic_id, 0))


def topic_rename(*, topic: Topic, label: str) -> Topic:
    label = (label or "").strip()
    if not label or len(label) > 200:
        raise ValidationError({"label": _("Give the topic a name of 1 to 200 characters.")})
    if Topic.objects.filter(project_id=topic.project_id, label=label).exclude(pk=topic.pk).exists():
        raise ValidationError(
            {"label": _("Another topic of this project is called “%(label)s”.") % {"label": label}}
        )
    topic.label = label
    topic.save(update_fields=["label"])
    return topic


@transaction.atomic
def topics_merge(*, into: Topic, other: Topic) -> Topic:
    """Move every question of ``other`` into ``into`` and delete ``other``; words and seed words are pooled."""
    if into.project_id != other.project_id:
        raise ValidationError({"other": _("Both topics must belong to the same project.")})
    if into.pk == other.pk:
        raise ValidationError({"other": _("Choose two different topics to merge.")})
    Item.objects.filter(topic=other).update(topic=into)
    into.top_words = list(dict.fromkeys([*into.top_words, *other.top_words]))
    into.seed_words = list(dict.fromkeys([*into.seed_words, *other.seed_words]))
    into.selected = into.selected or other.selected
    into.is_residual = into.is_residual and other.is_residual
    into.save(update_fields=["top_words", "seed_words", "selected", "is_residual"])
    other.delete()
    topic_sizes_refresh(project=into.project)
    into.refresh_from_db()
    return into


@transaction.atomic
def item_move_to_topic(*, item: Item, topic: Topic | None) -> Item:
    items_move_to_topic(project=item.project, item_ids=[item.pk], topic=topic)
    item.refresh_from_db(fields=["topic", "updated_at"])
    return item


@transaction.atomic
def items_move_to_topic(*, project: Project, item_ids: list[int], topic: Topic | None) -> int:
    """Put the project's items ``item_ids`` in ``topic`` (None: no topic); returns how many moved."""
    if topic is not None and topic.project_id != project.pk:
        raise ValidationError({"topic": _("The topic belongs to another project.")})
    moved = Item.objects.filter(project=project, pk__in=item_ids).update(
        topic=topic, updated_at=timezone.now()
    )
    topic_sizes_refresh(project=project)
    return moved


def topics_select(*, project: Project, topic_ids: list[int]) -> int:
    """Mark exactly these topics selected for annotation (the queue serves only them); returns how many."""
    ids = set(Topic.objects.filter(project=project, pk__in=topic_ids).values_list("pk", flat=True))
    if len(ids) != len(set(topic_ids)):
        raise ValidationError({"topics": _("Some of the chosen topics are not in this project.")})
    with transaction.atomic():
        Topic.objects.filter(project=project).exclude(pk__in=ids).update(selected=False)
        Topic.objects.filter(project=project, pk__in=ids).update(selected=True)
    return len(ids)


def class_targets_set(*, project: Project, targets: dict, topic: Topic | None = None) -> dict[str, int]:
    """Set the target count per class of the project, or of one of its topics."""
    checked = class_targets_check(project, targets)
    if topic is not None:
        if topic.project_id != project.pk:
            raise ValidationError({"topic": _("The topic belongs to another project.")})
        topic.class_targets = checked
        topic.save(update_fields=["class_targets"])
    else:
        project.class_targets = checked
        project.save(update_fields=["class_targets"])
    return checked


def class_targets_set_table(*, project: Project, targets: dict, topic_targets: dict[Topic, dict]) -> None:
    """The targets table of a project at once (the project's row and its topics' rows): all saved or none."""
    with transaction.atomic():
        class_targets_set(project=project, targets=targets)
        for topic, row in topic_targets.items():
            class_targets_set(project=project, topic=topic, targets=row)
