"""Full-text search of the items, kept out of the import's way.

On PostgreSQL each item has a Portuguese text vector (``annotation_item.search_vector``, migration 0003) under a
partial GIN index: only filled vectors are in it. An import writes its items without vectors, so its COPY pays
for no text analysis and no GIN insertion (measured: 5–7 s of the server's time for 85,000 questions, against
0.5 s for the rows themselves), and marks the project (``Project.search_pending_from``: the lowest id that may
have no vector). After its commit a background task (``search_catch_up``) fills the vectors a few thousand
items per transaction, then clears the mark. Meanwhile the items page says how many items are being indexed
(``search_backlog``), and search reads those items' text directly (``search_condition``), so nothing is
missed: the index answers for the indexed items, a scan of the primary key from the mark for the rest.

Items made one by one or by the hundred (``items_create``, ``save()``) get their vectors at once
(``vectors_fill``), and a trigger recomputes an item's vector whenever its question, answer or context changes.

SQLite searches with ``LIKE`` and has nothing to catch up.
"""

from django.db import connection, transaction
from django.db.models import BooleanField, Q
from django.db.models.expressions import RawSQL

from core.db.search import stores_text_vectors

from .models import Item, Project

# The text analysed: question, answer and context, as the trigger of migration 0003 spells it.
DOCUMENT = "to_tsvector('portuguese'::regconfig, question || ' ' || reference_answer || ' ' || context)"
# The same, its columns named with their table (for a condition in a query that may join others).
QUALIFIED_DOCUMENT = (
    "to_tsvector('portuguese'::regconfig, \"annotation_item\".\"question\" || ' ' || "
    '"annotation_item"."reference_answer" || \' \' || "annotation_item"."context")'
)
QUERY = "websearch_to_tsquery('portuguese'::regconfig, %s)"
# Items whose vectors one transaction of the catch-up fills: each commit makes them searchable by the index.
CATCH_UP_ROWS = 5_000


def uses_vectors() -> bool:
    return stores_text_vectors()


def search_condition(project: Project, text: str):
    """Items whose question, answer or context matches ``text``: Portuguese stemming on PostgreSQL (through the
    index, and a direct reading of the items not indexed yet), every word as a substring elsewhere."""
    if uses_vectors():
        pending_from = _pending_from(project.pk)
        if pending_from is None:
            return RawSQL(
                f'"annotation_item"."search_vector" @@ {QUERY}', [text], output_field=BooleanField()
            )
        # Two arms the planner answers with two indexes (BitmapOr): the GIN index, and the primary key from
        # the mark for the items whose vector is still empty.
        return RawSQL(
            f'("annotation_item"."search_vector" @@ {QUERY} OR ("annotation_item"."id" >= %s '
            f'AND "annotation_item"."search_vector" IS NULL AND {QUALIFIED_DOCUMENT} @@ {QUERY}))',
            [text, pending_from, text],
            output_field=BooleanField(),
        )
    condition = Q()
    for word in text.split()[:10]:
        condition &= (
            Q(question__icontains=word) | Q(reference_answer__icontains=word) | Q(context__icontains=word)
        )
    return condition


def _pending_from(project_id: int) -> int | None:
    return Project.objects.filter(pk=project_id).values_list("search_pending_from", flat=True).first()


def search_backlog(project: Project) -> int:
    """How many of the project's items search still reads without the index (0 on SQLite)."""
    if not uses_vectors():
        return 0
    pending_from = _pending_from(project.pk)
    if pending_from is None:
        return 0
    return (
        Item.objects.filter(project=project, id__gte=pending_from)
        .extra(where=['"annotation_item"."search_vector" IS NULL'])
        .count()
    )


def vectors_fill(ids) -> None:
    """Fill the vectors of the items ``ids`` now (items made a few at a time)."""
    ids = [int(pk) for pk in ids]
    if not uses_vectors() or not ids:
        return
    with connection.cursor() as cursor:
        cursor.execute(f"UPDATE annotation_item SET search_vector = {DOCUMENT} WHERE id = ANY(%s)", [ids])


def item_saved(sender, instance, created, raw=False, **kwargs) -> None:
    """An item made by ``save()`` (one at a time): its vector now (connected in annotation.apps)."""
    if created and not raw:
        vectors_fill([instance.pk])


def search_backlog_mark(project: Project, first_id: int) -> None:
    """Inside the transaction that writes items from ``first_id`` on without vectors: mark the project, and
    once that transaction commits, start the catch-up."""
    if not uses_vectors():
        return
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE annotation_project SET search_pending_from = LEAST(COALESCE(search_pending_from, %s), %s) "
            "WHERE id = %s",
            [first_id, first_id, project.pk],
        )
    project_id = project.pk
    transaction.on_commit(lambda: search_enqueue(project_id), robust=True)


def next_item_id() -> int:
    """An id lower than that of any item inserted after this call (PostgreSQL: drawn from the sequence)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT nextval(pg_get_serial_sequence('annotation_item', 'id'))")
        return cursor.fetchone()[0]


def search_enqueue(project_id: int) -> None:
    from .tasks import search_catch_up_task

    search_catch_up_task.delay(project_id)


def search_catch_up(project_id: int, rows: int = CATCH_UP_ROWS) -> int:
    """Fill the vectors of the project's items that have none, ``rows`` per transaction, then clear the mark;
    return how many were filled. Safe to run twice at once (rows another run holds are skipped, and the mark is
    cleared only when no item of the project is left without its vector)."""
    if not uses_vectors():
        return 0
    filled = 0
    cursor_id = _pending_from(project_id)
    if cursor_id is None:
        return 0
    while True:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(
                f"UPDATE annotation_item SET search_vector = {DOCUMENT} WHERE id IN ("
                "SELECT id FROM annotation_item WHERE id >= %s AND project_id = %s AND search_vector IS NULL "
                "ORDER BY id LIMIT %s FOR UPDATE SKIP LOCKED) RETURNING id",
                [cursor_id, project_id, rows],
            )
            done = [row[0] for row in cursor.fetchall()]
        if not done:
            break
        filled += len(done)
        cursor_id = max(done) + 1
    with transaction.atomic():
        # The project's row is locked by an import while it writes: its items are committed (and seen) here.
        pending_from = (
            Project.objects.select_for_update()
            .filter(pk=project_id)
            .values_list("search_pending_from", flat=True)
            .first()
        )
        if pending_from is not None:
            left = (
                Item.objects.filter(project_id=project_id, id__gte=pending_from)
                .extra(where=['"annotation_item"."search_vector" IS NULL'])
                .exists()
            )
            if not left:
                Project.objects.filter(pk=project_id).update(search_pending_from=None)
            else:
                transaction.on_commit(lambda: search_enqueue(project_id), robust=True)
    return filled


def search_backlogs_resume() -> list[int]:
    """Projects whose catch-up is not done (its task lost with a broker down, or its worker died): sent again.
    Called by the periodic sweep."""
    if not uses_vectors():
        return []
    ids = list(Project.objects.filter(search_pending_from__isnull=False).values_list("pk", flat=True))
    for project_id in ids:
        search_enqueue(project_id)
    return ids
