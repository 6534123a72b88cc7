"""ExpliCa's published pair file, imported through the common import service, is written a chunk of pairs per
transaction: no request or worker holds the database's write lock for the whole file. Until the import
finishes its pairs and their items are at no door (pairs page, queue, API, release and export); if it stops
midway, what it wrote is removed and the project is as before; the pairs it gives are those of one transaction,
field by field."""

import csv
import io
import threading

import pytest
from django.db import connection, transaction
from django.urls import reverse

from annotation.importing import ImportRejected, questions_import
from annotation.importing import service as import_service
from annotation.models import ImportBatch, Item, ItemGroup, Membership
from annotation.queue import assignment_next, eligible_items
from designs.explica import published as explica_published
from designs.explica.published import published_pairs_import
from evaluation.models import ReleaseItem
from evaluation.releases.export import export_release
from tests.designs.test_explica import explica_project
from tests.evaluation.runs import release_of
from tests.factories import api_token_key

pytestmark = pytest.mark.django_db(transaction=True)

COLUMNS = [
    "pair_id",
    "Sentence_A",
    "Sentence_B",
    "order",
    "rating_iconic_causal",
    "rating_anticonic_causal",
    "human_preferred_connective",
    "additional_dimension",
]
CHUNK = 2  # pairs per transaction in these tests


def pair_file(count: int, prefix: str) -> bytes:
    """``count`` pairs, each on two rows (both orders), with ratings and the published extra columns."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(COLUMNS)
    for n in range(count):
        a, b = f"The {prefix} storm number {n} came", f"The {prefix} river number {n} rose"
        extra = ["so", "physical" if n % 2 else ""]
        writer.writerow([f"{prefix}-{n:02d}", a, b, "iconic", f"{7 + n % 3}.5", "2,25", *extra])
        writer.writerow([f"{prefix}-{n:02d}", b, a, "anti-iconic", "3", f"{n}.1", *extra])
    return out.getvalue().encode()


@pytest.fixture
def explica(owner, curator, annotators):
    project = explica_project(slug="explica-chunks", overlap=2)
    Membership.objects.create(project=project, user=owner, role=Membership.Role.OWNER)
    Membership.objects.create(project=project, user=curator, role=Membership.Role.CURATOR)
    for annotator in annotators:
        Membership.objects.create(project=project, user=annotator, role=Membership.Role.ANNOTATOR)
    return project


@pytest.fixture
def chunked(monkeypatch):
    monkeypatch.setattr(import_service, "CHUNK_GROUPS", CHUNK)


@pytest.fixture
def pair_adds(monkeypatch):
    """Every call of ``explica_pair_add`` by the import: how many earlier pairs had committed when it began."""
    add = explica_published.explica_pair_add
    calls = {"committed": [], "seen": [], "fail_at": None}

    def watched_add(**kwargs):
        number = len(calls["seen"])
        calls["seen"].append(len(calls["committed"]))
        if number == calls["fail_at"]:
            raise RuntimeError("the worker stopped")
        group = add(**kwargs)
        transaction.on_commit(lambda: calls["committed"].append(number))
        return group

    monkeypatch.setattr(explica_published, "explica_pair_add", watched_add)
    return calls


def project_state(project) -> tuple[list, list]:
    groups = sorted(ItemGroup.with_unsettled.filter(project=project).values_list("pk", "external_id"))
    items = sorted(Item.with_unsettled.filter(project=project).values_list("pk", "question"))
    return groups, items


def test_an_import_that_stops_after_chunks_committed_leaves_the_project_as_before(
    explica, chunked, pair_adds, monkeypatch
):
    assert questions_import(project=explica, data=pair_file(3, "old"), filename="old.csv").writing is False
    before = project_state(explica)
    written_remove = import_service.written_remove
    seen = {}

    def watched_remove(batch, **kwargs):
        # What the import had committed when it stopped: three chunks, outside any transaction, at no door.
        seen["groups"] = ItemGroup.with_unsettled.filter(import_batch_id=batch.pk).count()
        seen["items"] = Item.with_unsettled.filter(import_batch_id=batch.pk).count()
        seen["visible"] = (
            ItemGroup.objects.filter(import_batch_id=batch.pk).count()
            + Item.objects.filter(import_batch_id=batch.pk).count()
        )
        seen["in_transaction"] = connection.in_atomic_block
        return written_remove(batch, **kwargs)

    monkeypatch.setattr(import_service, "written_remove", watched_remove)
    pair_adds["fail_at"], pair_adds["seen"] = 3 * CHUNK, []
    with pytest.raises(RuntimeError):
        questions_import(project=explica, data=pair_file(10, "new"), filename="new.csv")

    assert seen == {"groups": 3 * CHUNK, "items": 3 * CHUNK * 8, "visible": 0, "in_transaction": False}
    assert project_state(explica) == before
    batch = ImportBatch.objects.get(filename="new.csv")
    assert not batch.writing
    assert not batch.groups.exists() and not ItemGroup.with_unsettled.filter(import_batch=batch).exists()

    # The same file again: every pair.
    pair_adds["fail_at"] = None
    again = questions_import(project=explica, data=pair_file(10, "new"), filename="new.csv")
    assert (again.status, again.writing) == (ImportBatch.Status.DONE, False)
    assert again.funnel["published"]["groups"] == 10 and again.funnel["imported"] == 80
    assert ItemGroup.objects.filter(project=explica).count() == 13
    assert Item.objects.filter(project=explica).count() == 13 * 8


def test_a_pair_refused_in_a_later_chunk_is_reported_as_before_and_nothing_stays(explica, chunked, pair_adds):
    questions_import(project=explica, data=pair_file(3, "old"), filename="old.csv")
    before = project_state(explica)
    # Pair old-01 again, as the file's ninth pair: four chunks are written before it is met.
    rows = (
        pair_file(8, "new").decode() + "old-01,The old storm number 1 came,The old river number 1 rose,,,,,\n"
    )
    with pytest.raises(ImportRejected) as refused:
        questions_import(project=explica, data=rows.encode(), filename="again.csv")
    assert [error.reason for error in refused.value.errors] == [
        "row 17: pair old-01 is already in the project"
    ]
    assert len(pair_adds["committed"]) == 3 + 4 * CHUNK  # the old file's three, then four chunks of this one
    assert project_state(explica) == before
    # A pair without its second sentence, in a later chunk.
    rows = pair_file(8, "new").decode() + "new-99,The last storm came,,,,,,\n"
    with pytest.raises(ImportRejected) as refused:
        questions_import(project=explica, data=rows.encode(), filename="half.csv")
    assert [error.reason for error in refused.value.errors] == [
        "row 17: pair new-99: both sentence_a and sentence_b are needed"
    ]
    assert project_state(explica) == before
    assert not ImportBatch.objects.filter(writing=True).exists()


def test_each_chunk_commits_before_the_next_and_the_pairs_are_those_of_one_transaction(
    explica, chunked, pair_adds, owner
):
    data = pair_file(7, "p")
    batch = questions_import(project=explica, data=data, filename="pairs.csv")
    # Each chunk of pairs committed before the next one began.
    assert pair_adds["seen"] == [0, 0, 2, 2, 4, 4, 6]
    assert batch.funnel["published"]["groups"] == 7 and batch.funnel["imported"] == 56
    assert batch.funnel["read"] == 14

    whole = explica_project(slug="explica-whole", overlap=2)
    pair_adds["seen"], pair_adds["committed"] = [], []
    published_pairs_import(project=whole, data=data, filename="pairs.csv")
    assert pair_adds["seen"] == [0] * 7  # one transaction

    def groups(project):
        skip = {"id", "project", "import_batch", "created_at"}
        fields = [field.attname for field in ItemGroup._meta.concrete_fields if field.name not in skip]
        return list(ItemGroup.objects.filter(project=project).order_by("pk").values_list(*fields))

    def items(project):
        skip = {"id", "project", "group", "import_batch", "created_at", "updated_at"}
        fields = [field.attname for field in Item._meta.concrete_fields if field.name not in skip]
        return list(
            Item.objects.filter(project=project).order_by("pk").values_list("group__external_id", *fields)
        )

    assert groups(explica) == groups(whole)
    assert items(explica) == items(whole)
    assert len(items(explica)) == 56
    first = ItemGroup.objects.get(project=explica, external_id="p-01")
    assert first.metadata["published"] == {
        "human_preferred_connective": "so",
        "additional_dimension": "physical",
    }
    assert first.metadata["published_ratings"]["anti-iconic"]["rating_anticonic_causal"] == 1.1
    assert set(ItemGroup.objects.filter(project=explica).values_list("import_batch", flat=True)) == {batch.pk}


def test_while_an_import_writes_no_reader_sees_its_pairs(
    explica, chunked, monkeypatch, annotators, curator, client_for, tmp_path
):
    questions_import(project=explica, data=pair_file(2, "old"), filename="old.csv")
    old_items = set(Item.objects.filter(project=explica).values_list("pk", flat=True))
    chunks_commit = explica_published.chunks_commit
    seen = {}

    def doors():
        """What the site's readers see, from a connection of their own."""
        try:
            seen["groups"] = ItemGroup.objects.filter(project=explica).count()
            seen["project_groups"] = explica.groups.count()
            seen["items"] = Item.objects.filter(project=explica).count()
            hidden = set(Item.with_unsettled.filter(project=explica).values_list("pk", flat=True)) - old_items
            seen["written"] = len(hidden)
            # The pairs page.
            page = client_for(curator).get(reverse("designs:explica", args=[explica.slug])).content.decode()
            seen["page"] = ("old-00" in page, "new-" in page)
            # The queue.
            served = set()
            for annotator in annotators:
                served |= set(eligible_items(explica, annotator).values_list("pk", flat=True))
                served.add(assignment_next(project=explica, annotator=annotator).item_id)
            seen["served"] = served == old_items
            # The API.
            api = client_for(curator)
            api.defaults["HTTP_AUTHORIZATION"] = f"Token {api_token_key(curator)}"
            body = api.get(f"/api/v1/projects/{explica.slug}/items/").json()
            seen["api"] = {row["id"] for row in body.get("results", body)} == old_items
            # A release and its export.
            Item.with_unsettled.filter(project=explica).update(status=Item.Status.APPROVED)
            release = release_of(explica, ratios=(0, 0, 1))
            seen["released"] = set(
                ReleaseItem.objects.filter(release=release).values_list("item_id", flat=True)
            )
            export_release(release, tmp_path / "out", formats=("jsonl",))
            exported = (tmp_path / "out" / "explica" / "explica.csv").read_text()
            seen["exported"] = sorted({row["pair_id"] for row in csv.DictReader(io.StringIO(exported))})
        finally:
            connection.close()

    def pairs_then_readers(pairs):
        for number, pair in enumerate(pairs):
            if number == 2 * CHUNK:  # two chunks committed, the third not begun
                seen["in_transaction"] = connection.in_atomic_block
                reader = threading.Thread(target=doors)
                reader.start()
                reader.join()
            yield pair

    monkeypatch.setattr(
        explica_published,
        "chunks_commit",
        lambda pairs, write: chunks_commit(pairs_then_readers(pairs), write),
    )
    batch = questions_import(project=explica, data=pair_file(6, "new"), filename="new.csv")

    assert seen.pop("exported") == ["old-00", "old-01"]
    assert seen == {
        "in_transaction": False,
        "groups": 2,
        "project_groups": 2,
        "items": 16,
        "written": 2 * CHUNK * 8,
        "page": (True, False),
        "served": True,
        "api": True,
        "released": old_items,
    }
    # Once the import is done, every pair is there.
    assert batch.status == ImportBatch.Status.DONE
    assert ItemGroup.objects.filter(project=explica).count() == 8
    page = client_for(curator).get(reverse("designs:explica", args=[explica.slug])).content.decode()
    assert "new-05" in page
