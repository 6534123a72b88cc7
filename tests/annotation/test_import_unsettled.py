"""An import writes chunk by chunk, each chunk its own transaction: until it finishes, its items are no item
of the project at any door (queue, items page, API, release), and an import that stops midway leaves the
project as it was."""

import csv
import io

import pytest
from django.db import DatabaseError, connection
from django.http import QueryDict

from annotation.importing import ImportRejected, questions_import
from annotation.importing import service as import_service
from annotation.item_browser import ItemQuery, items_matching
from annotation.models import DroppedRow, ImportBatch, Item
from annotation.queue import assignment_next
from tests.factories import ItemFactory, api_token_key
from topics.models import Topic


def _csv(count: int, prefix: str = "q") -> bytes:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["id", "question", "causal_class", "topic"])
    for n in range(count):
        writer.writerow(
            [
                f"{prefix}{n}",
                f"Por que a inflação sobe quando os juros caem no caso {prefix}{n}?",
                "",
                f"T{n % 7}",
            ]
        )
    return out.getvalue().encode()


@pytest.mark.django_db(transaction=True)
def test_an_import_that_fails_after_chunks_committed_leaves_the_project_as_before(project, monkeypatch):
    monkeypatch.setattr(import_service, "CHUNK_ROWS", 100)
    monkeypatch.setattr(import_service, "WRITE_CHUNK_ROWS", 100)
    monkeypatch.setattr("core.db.bulk.SQLITE_BATCH_ROWS", 100)
    before = questions_import(project=project, data=_csv(50, "old"), filename="old.csv")
    assert before.status == ImportBatch.Status.DONE
    items_before = sorted(Item.objects.filter(project=project).values_list("pk", "question"))
    topics_before = sorted(Topic.objects.filter(project=project).values_list("pk", "label"))
    add = import_service._Scan.add
    calls = []

    def failing_add(self, rows, sources):
        calls.append(len(rows))
        if len(calls) == 5:
            raise RuntimeError("the worker stopped")
        return add(self, rows, sources)

    written_remove = import_service.written_remove
    seen = {}

    def watched_remove(batch, **kwargs):
        # What the import had committed when it stopped: several chunks, outside any transaction, unseen.
        seen["written"] = Item.with_unsettled.filter(import_batch_id=batch.pk).count()
        seen["visible"] = Item.objects.filter(import_batch_id=batch.pk).count()
        seen["in_transaction"] = connection.in_atomic_block
        return written_remove(batch, **kwargs)

    monkeypatch.setattr(import_service._Scan, "add", failing_add)
    monkeypatch.setattr(import_service, "written_remove", watched_remove)
    with pytest.raises(RuntimeError):
        questions_import(project=project, data=_csv(1000, "new"), filename="new.csv")
    assert seen == {"written": 400, "visible": 0, "in_transaction": False}
    assert sorted(Item.with_unsettled.filter(project=project).values_list("pk", "question")) == items_before
    assert sorted(Topic.objects.filter(project=project).values_list("pk", "label")) == topics_before
    batch = ImportBatch.objects.get(filename="new.csv")
    assert not batch.writing
    assert not DroppedRow.objects.filter(batch=batch).exists()

    # The same file again, whole: every row, the topics counted on past any id the failed try took.
    monkeypatch.setattr(import_service._Scan, "add", add)
    again = questions_import(project=project, data=_csv(1000, "new"), filename="new.csv")
    assert (again.status, again.funnel["imported"]) == (ImportBatch.Status.DONE, 1000)
    assert Item.objects.filter(project=project).count() == 1050


@pytest.mark.django_db(transaction=True)
def test_a_rejected_file_leaves_nothing_of_the_chunks_written_before_its_first_error(project, monkeypatch):
    monkeypatch.setattr(import_service, "CHUNK_ROWS", 100)
    monkeypatch.setattr("core.db.bulk.SQLITE_BATCH_ROWS", 100)
    data = _csv(600) + b"bad,,,\n"  # the last row has no question: the file is refused whole
    with pytest.raises(ImportRejected):
        questions_import(project=project, data=data, filename="bad.csv")
    assert not Item.with_unsettled.filter(project=project).exists()
    assert ImportBatch.objects.get(filename="bad.csv").status == ImportBatch.Status.FAILED


@pytest.mark.django_db
def test_the_items_of_an_import_still_writing_are_at_no_door(project, annotators, curator, client):
    from evaluation.models import ReleaseItem
    from evaluation.services import release_build, release_create

    writing = ImportBatch.objects.create(project=project, filename="half.csv", writing=True)
    done = ImportBatch.objects.create(project=project, filename="whole.csv", status=ImportBatch.Status.DONE)
    hidden = [
        ItemFactory(project=project, import_batch=writing, status=status)
        for status in (Item.Status.PENDING, Item.Status.IN_REVIEW, Item.Status.APPROVED)
    ]
    shown = [
        ItemFactory(project=project, import_batch=done, status=Item.Status.APPROVED),
        ItemFactory(project=project, status=Item.Status.APPROVED),
    ]
    hidden_ids = {item.pk for item in hidden}

    assert set(Item.with_unsettled.filter(project=project).values_list("pk", flat=True)) >= hidden_ids
    assert not hidden_ids & set(project.items.values_list("pk", flat=True))
    # The queue serves none of them.
    for annotator in annotators:
        while (assignment := assignment_next(project=project, annotator=annotator)) is not None:
            assert assignment.item_id not in hidden_ids
    # The items page lists none of them.
    listed = set(items_matching(project, ItemQuery.from_params(QueryDict(""))).values_list("pk", flat=True))
    assert listed and not listed & hidden_ids
    # The API returns none of them, and none by its id.
    client.defaults["HTTP_AUTHORIZATION"] = f"Token {api_token_key(curator)}"
    response = client.get(f"/api/v1/projects/{project.slug}/items/")
    assert response.status_code == 200
    body = response.json()
    returned = {row["id"] for row in body.get("results", body)}
    assert returned and not returned & hidden_ids
    assert client.get(f"/api/v1/projects/{project.slug}/items/{hidden[1].pk}/judgments/").status_code == 404
    # A release takes none of them.
    release = release_build(release=release_create(project=project, seed=1))
    released = set(ReleaseItem.objects.filter(release=release).values_list("item_id", flat=True))
    assert released == {item.pk for item in shown}

    # Once the import finishes they are items like any other.
    ImportBatch.objects.filter(pk=writing.pk).update(writing=False, status=ImportBatch.Status.DONE)
    assert hidden_ids <= set(project.items.values_list("pk", flat=True))


@pytest.mark.django_db(transaction=True)
def test_a_project_deleted_while_its_import_writes_keeps_no_item(project, monkeypatch):
    # The items carry no database constraint to their project: the import checks it once, at its end.
    from annotation import services
    from annotation.models import Project

    monkeypatch.setattr(import_service, "CHUNK_ROWS", 100)
    monkeypatch.setattr(import_service, "WRITE_CHUNK_ROWS", 100)
    monkeypatch.setattr("core.db.bulk.SQLITE_BATCH_ROWS", 100)
    create = services.items_create_fast
    written = []

    def deleting_create(**kwargs):
        written.append(create(**kwargs))
        if len(written) == 1:  # on PostgreSQL the chunks after the first are written for a deleted project
            Project.objects.filter(pk=project.pk).delete()
        return written[-1]

    monkeypatch.setattr(services, "items_create_fast", deleting_create)
    with pytest.raises((Project.DoesNotExist, DatabaseError)):
        questions_import(project=project, data=_csv(500, "gone"), filename="gone.csv")
    assert sum(written) == 500
    assert not Item.with_unsettled.filter(project_id=project.pk).exists()
    assert not Item.with_unsettled.filter(question__contains="caso gone").exists()
