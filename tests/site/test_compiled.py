"""Compiled queries answer exactly what the ORM answers, and refuse what they cannot compile once."""

from datetime import timedelta

import pytest
from django.db import transaction
from django.db.models import Count, Exists, OuterRef
from django.db.transaction import TransactionManagementError
from django.utils import timezone

from annotation.models import Assignment, Item, Option, item_expertise_tag
from annotation.queue import assignment_next
from core.db.compiled import CompiledQuery
from tests.factories import ItemFactory

pytestmark = pytest.mark.django_db


def items_of(*, project_id, tags, since, kind):
    items = Item.objects.filter(project_id=project_id, created_at__gte=since).alias(
        expertise=item_expertise_tag()
    )
    if kind == "tagged":
        items = items.filter(expertise__in=tags)
    return items.select_related("project").annotate(options_count=Count("options")).order_by("id")


ITEMS = CompiledQuery(lambda **values: items_of(**values)[:1])


def test_a_compiled_query_finds_what_the_orm_finds_for_every_value(project, owner):
    tagged = [
        ItemFactory(project=project, metadata={"expertise": tag}) for tag in ("saúde", "educação", "clima")
    ]
    Option.objects.create(item=tagged[1], text="Outra opção", role="irrelevant", position=0)
    since = timezone.now() - timedelta(hours=1)

    for tags in (["educação"], ["clima", "saúde"], ["nenhuma"]):
        values = {"project_id": project.pk, "tags": tags, "since": since}
        expected = items_of(**values, kind="tagged").first()
        found = ITEMS.first(shape={"kind": "tagged"}, **values)
        assert (found and found.pk) == (expected and expected.pk)
        if found:
            assert found.project == project and found.project.name == project.name  # select_related
            assert found.metadata == expected.metadata and isinstance(found.metadata, dict)  # converters
            assert found.created_at == expected.created_at and found.created_at.tzinfo is not None
            assert found.options_count == expected.options_count  # annotations

    assert ITEMS.first(shape={"kind": "any"}, project_id=project.pk, tags=[], since=timezone.now()) is None
    assert ITEMS.first(shape={"kind": "any"}, project_id=project.pk, tags=[], since=since).pk == tagged[0].pk


def test_a_value_written_into_the_sql_or_changed_on_its_way_is_refused(project):
    ItemFactory(project=project)
    sliced = CompiledQuery(
        lambda *, project_id, n: Item.objects.filter(project_id=project_id).order_by("id")[:n]
    )
    with pytest.raises(ValueError, match="written into the SQL"):
        sliced.first(project_id=project.pk, n=2)

    as_json = CompiledQuery(lambda *, tag: Item.objects.filter(metadata={"expertise": tag})[:1])
    with pytest.raises(ValueError, match="changed on its way"):
        as_json.first(tag="saúde")

    flagged = CompiledQuery(lambda *, done: Item.objects.filter(round_judged__gt=0 if done else -1)[:1])
    with pytest.raises(TypeError, match="shape"):
        flagged.first(done=True)


@pytest.mark.django_db(transaction=True)
def test_a_compiled_locking_query_needs_a_transaction(project):
    item = ItemFactory(project=project)
    locked = CompiledQuery(lambda *, pk: Item.objects.select_for_update().filter(pk=pk))
    with transaction.atomic():
        assert locked.first(pk=item.pk) == item
    with pytest.raises(TransactionManagementError):
        locked.first(pk=item.pk)  # compiled already: the check is its own


def test_the_queue_still_skips_what_the_annotator_holds_in_another_project(project, annotators):
    """The queue's compiled queries take the project and annotator as values: a second project
    of other ids and another annotator get their own answers from the same compiled SQL."""
    from tests.factories import ProjectFactory

    other = ProjectFactory(overlap=1)
    other.memberships.create(user=annotators[0], role="annotator")
    mine, theirs = ItemFactory(project=project), ItemFactory(project=other)

    assert assignment_next(project=project, annotator=annotators[0]).item_id == mine.pk
    assert assignment_next(project=other, annotator=annotators[0]).item_id == theirs.pk
    assert assignment_next(project=other, annotator=annotators[1]) is None  # its one slot is taken
    assert assignment_next(project=project, annotator=annotators[1]).item_id == mine.pk
    assert not Assignment.objects.filter(
        Exists(
            Assignment.objects.filter(
                item=OuterRef("item"), annotator=OuterRef("annotator"), round=OuterRef("round")
            ).exclude(pk=OuterRef("pk"))
        )
    ).exists()


def annotator_round_trip(project, annotators, client_for):
    """What an annotator does in a round: the queue, the item page, a judgment, an edit of the item."""
    from django.urls import reverse

    from annotation.services import Author, item_revise
    from tests.annotation.helpers import judgment_post

    for n in range(3):
        ItemFactory(project=project, status=Item.Status.IN_REVIEW, round=1, reference_answer=f"Resposta {n}.")
    annotator = annotators[0]
    client = client_for(annotator)
    queued = client.post(reverse("annotation:queue_next", args=[project.slug]))
    assignment = Assignment.objects.filter(annotator=annotator).latest("pk")
    page = client.get(reverse("annotation:assignment", args=[project.slug, assignment.pk]))
    judged = client.post(
        reverse("annotation:assignment_judge", args=[project.slug, assignment.pk]), judgment_post(project)
    )
    item = Item.objects.get(pk=assignment.item_id)
    edited = item_revise(item=item, changes={"context": "Contexto."}, author=Author(user=annotator))
    part = client.get(reverse("annotation:item_part", args=[project.slug, item.pk, "history"]))
    from annotation.permissions import get_item_for_editing, get_project_for_user
    from tests.factories import UserFactory

    admin = UserFactory(username=f"admin{Item.objects.count()}", is_superuser=True)
    seen_by_admin = get_project_for_user(admin, project.slug).pk
    revised = Item.objects.filter(project=project).exclude(pk=item.pk).first()
    revised.status = Item.Status.NEEDS_REVISION
    revised.save(update_fields=["status"])
    editable = get_item_for_editing(annotator, project, revised.pk).pk == revised.pk
    return [
        queued.status_code,
        page.status_code,
        judged.status_code,
        edited.version,
        part.status_code,
        seen_by_admin == project.pk,
        editable,
        sorted(Assignment.objects.values_list("item_id", "annotator_id", "round")),
    ]


def test_every_compiled_query_compiles_on_the_annotators_path_and_answers_as_the_plain_orm(
    project, annotators, client_for, settings
):
    """The pages' shapes all compile on this Django (a test run at start-up of each upgrade), and with
    COMPILED_QUERIES off the same path gives the same answers through the ORM."""
    for query in CompiledQuery.every:
        query._compiled.clear()
    compiled = annotator_round_trip(project, annotators, client_for)
    never = [
        (query.build.__module__, query.build.__code__.co_firstlineno)
        for query in CompiledQuery.every
        if not query._compiled
        and query.build.__module__.startswith(("annotation", "generation", "evaluation"))
    ]
    assert never == []

    Assignment.objects.all().delete()
    Item.objects.all().delete()
    settings.COMPILED_QUERIES = False
    for query in CompiledQuery.every:
        query._compiled.clear()
    plain = annotator_round_trip(project, annotators, client_for)
    assert all(not query._compiled for query in CompiledQuery.every)
    assert plain[:7] == compiled[:7] and len(plain[7]) == len(compiled[7])
