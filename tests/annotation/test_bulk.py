"""Bulk inserts and updates (core.db.bulk): on SQLite a large insert leaves statistics for the query planner;
a large update (by COPY into a scratch table on PostgreSQL) writes what the row-by-row one writes."""

import json
import os
import threading
import time
import uuid

import pytest
from django.db import connection, transaction
from django.utils import timezone

from annotation.models import Item
from core.db import bulk
from core.db.bulk import fast_insert, fast_update
from tests.factories import ProjectFactory

pytestmark = pytest.mark.django_db


@pytest.mark.allow_skip
def test_a_large_insert_on_sqlite_leaves_statistics_for_the_queue_indexes(monkeypatch):
    if connection.vendor != "sqlite":
        pytest.skip("PostgreSQL gathers statistics itself (autovacuum)")
    monkeypatch.setattr(bulk, "ANALYZE_AFTER_ROWS", 50)
    project = ProjectFactory()
    now = timezone.now()
    written = fast_insert(
        Item,
        ["question", "text_key", "external_id"],
        ((f"Por que {n}?", f"{n:040x}", f"x{n}") for n in range(60)),
        constants={
            "project_id": project.pk,
            "status": "in_review",
            "round": 1,
            "version": 1,
            "origin": "natural",
            "source": "",
            "context": "",
            "causal_class": "",
            "reference_answer": "",
            "answer_by": "",
            "position_in_group": 0,
            "created_at": now,
            "updated_at": now,
            "answer_provenance": "{}",
            "metadata": "{}",
        },
    )

    assert written == 60
    with connection.cursor() as cursor:
        cursor.execute("SELECT idx FROM sqlite_stat1 WHERE tbl = 'annotation_item'")
        indexes = {row[0] for row in cursor.fetchall()}
    assert {"item_queue_fresh", "item_project_status_round"} <= indexes


@pytest.mark.parametrize("copy_from", [1, 10_000], ids=["whole batch at once", "row by row"])
def test_a_bulk_update_writes_each_rows_own_values_whichever_way_it_goes(monkeypatch, copy_from):
    """From ``COPY_UPDATE_ROWS`` rows on, PostgreSQL updates from a scratch table filled by COPY; every value —
    Portuguese text, JSON with quotes and nulls, timestamps — lands on its own row either way, and the rows
    not passed are untouched. The scratch table is gone afterwards."""
    monkeypatch.setattr(bulk, "COPY_UPDATE_ROWS", copy_from)
    project = ProjectFactory()
    items = [
        Item.objects.create(project=project, question=f"Por que {n}?", text_key=f"{n:040x}") for n in range(6)
    ]
    untouched = items.pop()
    later = timezone.now()
    for n, item in enumerate(items):
        item.status = "approved" if n % 2 else "rejected"
        item.updated_at = later
        item.metadata = {"nota": f"ação “{n}”\t\\ fim", "vazio": None, "n": n, "lista": [n, "dois"]}

    assert fast_update(Item, ["status", "updated_at", "metadata"], items) == 5

    for item in items:
        stored = Item.objects.get(pk=item.pk)
        assert (stored.status, stored.updated_at, stored.metadata) == (item.status, later, item.metadata)
    assert Item.objects.get(pk=untouched.pk).metadata == untouched.metadata
    assert Item.objects.get(pk=untouched.pk).status == untouched.status
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT count(*) FROM pg_class WHERE relname LIKE 'fast_update_%%'")
            assert cursor.fetchone()[0] == 0


def test_a_staged_insert_stores_what_a_direct_one_stores_in_the_same_order(monkeypatch):
    """On SQLite a batch of many rows goes through a scratch table and one ``INSERT … SELECT``; a batch of a few
    is inserted directly. Both store the same values — Portuguese text with quotes, tabs and backslashes, JSON
    text, integers, NULLs, timestamps given once as constants — and number the rows in the order given; the
    scratch table is gone afterwards (on PostgreSQL both are one COPY)."""
    monkeypatch.setattr(bulk, "SQLITE_BATCH_ROWS", 4)  # several batches, the last one short

    def rows(tag):
        for n in range(10):
            yield (
                f"Por que “[{tag}]{n}”?\tÉ\\assim; 'aspas' e \"aspas\"",
                f"{tag}{n:039x}",
                json.dumps({"ordem": n, "nota": None if n % 2 else f"ação {n}", "lista": [n, "dois"]}),
                n % 3 or None,
            )

    stored = {}
    for tag, stage_from in (("d", 1_000), ("s", 1)):
        monkeypatch.setattr(bulk, "SQLITE_STAGE_FROM_ROWS", stage_from)
        project = ProjectFactory()
        written = fast_insert(
            Item,
            ["question", "text_key", "metadata", "position_in_group"],
            ((question, key, metadata, position or 0) for question, key, metadata, position in rows(tag)),
            constants={
                k: v
                for k, v in _item_constants(project).items()
                if k not in ("metadata", "position_in_group")
            },
        )
        assert written == 10
        items = Item.objects.filter(project=project).order_by("pk")
        stored[tag] = [
            (
                item.question.replace(f"[{tag}]", ""),
                item.text_key[1:],
                item.metadata,
                item.position_in_group,
                item.created_at,
            )
            for item in items
        ]
        assert [item.text_key for item in items] == [f"{tag}{n:039x}" for n in range(10)]
    assert [row[:4] for row in stored["s"]] == [row[:4] for row in stored["d"]]
    assert stored["s"][0][2] == {"ordem": 0, "nota": "ação 0", "lista": [0, "dois"]}
    assert len({row[4] for row in stored["s"]}) == 1
    if connection.vendor == "sqlite":
        with connection.cursor() as cursor:
            cursor.execute("SELECT count(*) FROM sqlite_temp_master WHERE name LIKE 'fast_insert_rows%'")
            assert cursor.fetchone() == (0,)


def test_columns_the_same_throughout_a_batch_are_stored_as_each_row_would_have_bound_them(monkeypatch):
    """A column with one value in every row of a staged batch is bound once instead of row by row: a batch
    whose every column is the same, columns of one text, of None, of 0 and of ``1.0`` beside 1 (not the same,
    though equal in Python: a text column keeps "1.0"), each row stored as the direct insert stores it, in
    order."""
    monkeypatch.setattr(bulk, "SQLITE_BATCH_ROWS", 4)

    def rows(tag):
        for n in range(10):
            varying = n >= 4  # the first batch: every column the same in its 4 rows
            yield (
                f"[{tag}] Por que a maré {n if varying else 0} sobe?",
                "contrafactual",
                json.dumps({"fonte": "ação", "n": n % 2 if varying else 0}),
                None,
                0,
                1.0 if n == 9 else 1,
                f"{tag}{n:039x}",
            )

    stored = {}
    for tag, stage_from in (("d", 1_000), ("s", 1)):
        monkeypatch.setattr(bulk, "SQLITE_STAGE_FROM_ROWS", stage_from)
        project = ProjectFactory()
        constants = _item_constants(project)
        fields = [
            "question",
            "causal_class",
            "metadata",
            "topic_id",
            "position_in_group",
            "source",
            "text_key",
        ]
        written = fast_insert(
            Item, fields, rows(tag), constants={k: v for k, v in constants.items() if k not in fields}
        )
        assert written == 10
        stored[tag] = [
            (question.replace(f"[{tag}]", ""), *rest, key[1:])
            for question, *rest, key in Item.objects.filter(project=project)
            .order_by("pk")
            .values_list(*fields)
        ]
    assert stored["s"] == stored["d"]
    assert stored["s"][0] == (
        " Por que a maré 0 sobe?",
        "contrafactual",
        {"fonte": "ação", "n": 0},
        None,
        0,
        "1",
        f"{0:039x}",
    )
    assert [row[2]["n"] for row in stored["s"]] == [0, 0, 0, 0, 0, 1, 0, 1, 0, 1]
    assert [row[5] for row in stored["s"]] == ["1"] * 9 + ["1.0"]


@pytest.mark.allow_skip
def test_rows_that_insert_rows_themselves_keep_both_inserts_whole(monkeypatch):
    """On SQLite a generator of rows may insert rows of its own between two batches (each insert has its own
    scratch table): both inserts store every row."""
    if connection.vendor != "sqlite":
        pytest.skip(
            "on PostgreSQL the insert is one COPY, and the connection takes no other query until it ends"
        )
    monkeypatch.setattr(bulk, "SQLITE_BATCH_ROWS", 4)
    monkeypatch.setattr(bulk, "SQLITE_STAGE_FROM_ROWS", 1)
    outer, inner = ProjectFactory(), ProjectFactory()
    constants = {k: v for k, v in _item_constants(outer).items() if k != "project_id"}

    def rows():
        for n in range(10):
            if n == 5:
                fast_insert(
                    Item,
                    ["project_id", "question", "text_key"],
                    ((inner.pk, f"Dentro {m}?", f"i{m:039x}") for m in range(6)),
                    constants=constants,
                )
            yield (outer.pk, f"Fora {n}?", f"o{n:039x}")

    assert fast_insert(Item, ["project_id", "question", "text_key"], rows(), constants=constants) == 10
    assert list(Item.objects.filter(project=outer).order_by("pk").values_list("question", flat=True)) == [
        f"Fora {n}?" for n in range(10)
    ]
    assert Item.objects.filter(project=inner).count() == 6


def test_a_failed_insert_writes_nothing_and_leaves_no_scratch_table(monkeypatch):
    """A batch breaking a constraint (here two rows with one external id) raises the database's
    IntegrityError, as a direct insert does; the transaction writes none of the rows and no scratch table
    stays behind."""
    from django.db import IntegrityError, transaction

    monkeypatch.setattr(bulk, "SQLITE_STAGE_FROM_ROWS", 1)
    project = ProjectFactory()
    constants = {k: v for k, v in _item_constants(project).items() if k != "external_id"}
    rows = [(f"Por que {n}?", f"{n:040x}", "repetido" if n in (3, 7) else f"x{n}") for n in range(10)]

    with pytest.raises(IntegrityError), transaction.atomic():
        fast_insert(Item, ["question", "text_key", "external_id"], rows, constants=constants)

    assert not Item.objects.filter(project=project).exists()
    if connection.vendor == "sqlite":
        with connection.cursor() as cursor:
            cursor.execute("SELECT count(*) FROM sqlite_temp_master WHERE name LIKE 'fast_insert_rows%'")
            assert cursor.fetchone() == (0,)


@pytest.mark.parametrize("made_apart", [False, True], ids=["made when asked", "made apart"])
def test_rows_made_apart_are_stored_in_order_and_a_failure_on_either_side_stops_both(monkeypatch, made_apart):
    """``made_apart``: on SQLite each batch is made in a second thread while the one before is written. The
    rows land in their order, with the same ids as made when asked for; an error while making them reaches
    the caller and the rows are not kept; a failing insert ends the thread that makes them."""
    from django.db import IntegrityError, transaction

    monkeypatch.setattr(bulk, "SQLITE_BATCH_ROWS", 7)
    monkeypatch.setattr(bulk, "SQLITE_STAGE_FROM_ROWS", 3)  # batches of 7 staged, the last (2 rows) direct
    project = ProjectFactory()
    constants = {k: v for k, v in _item_constants(project).items() if k != "external_id"}
    threads = set()

    def rows(count=30, fail_at=None, repeat_id=None):
        for n in range(count):
            threads.add(threading.get_ident())
            if n == fail_at:
                raise ValueError("linha 12 ilegível")
            external = "repetido" if n == repeat_id else f"x{n}"
            yield (f"Por que a chuva {n} molha?", f"{n:040x}", external)

    fields = ["question", "text_key", "external_id"]
    assert fast_insert(Item, fields, rows(), constants=constants, made_apart=made_apart) == 30
    stored = list(Item.objects.filter(project=project).order_by("pk").values_list("pk", "external_id"))
    assert [external for _pk, external in stored] == [f"x{n}" for n in range(30)]
    assert [pk for pk, _external in stored] == list(range(stored[0][0], stored[0][0] + 30))
    made_here = threads == {threading.get_ident()}
    assert made_here is (not made_apart or connection.vendor != "sqlite")

    Item.objects.filter(project=project).delete()
    with pytest.raises(ValueError, match="linha 12"), transaction.atomic():
        fast_insert(Item, fields, rows(fail_at=12), constants=constants, made_apart=made_apart)
    first = (
        "Por que repetir?",
        "f" * 40,
        "repetido",
    )  # the 10th made row repeats its id: the 2nd batch fails
    with pytest.raises(IntegrityError), transaction.atomic():
        fast_insert(
            Item, fields, [first, *rows(300, repeat_id=9)], constants=constants, made_apart=made_apart
        )
    assert not Item.objects.filter(project=project).exists()
    assert not [thread for thread in threading.enumerate() if thread.name == "insert-ahead"]


@pytest.mark.allow_skip
@pytest.mark.django_db(transaction=True)
def test_rows_filled_apart_outside_a_transaction_are_stored_as_the_insert_here_stores_them(monkeypatch):
    """Outside a transaction (an import) on SQLite, rows made apart are made and put into scratch tables by a
    second thread while this connection moves the batch before into the table. Every value is stored as the
    batches filled on this connection store it — Portuguese text with quotes, tabs and backslashes, JSON,
    NULLs, a batch whose columns are all the same, ``1.0`` beside 1 in a text column, a short last batch — in
    the order given, with consecutive ids; the thread, the shared scratch database and its attachment are
    gone afterwards."""
    if connection.vendor != "sqlite":
        pytest.skip("on PostgreSQL an insert is one COPY")
    monkeypatch.setattr(bulk, "SQLITE_BATCH_ROWS", 4)
    monkeypatch.setattr(bulk, "SQLITE_STAGE_FROM_ROWS", 3)  # batches of 4 staged, the last (2 rows) direct
    fields = ["question", "causal_class", "metadata", "topic_id", "position_in_group", "source", "text_key"]
    threads = set()

    def rows(tag):
        for n in range(14):
            threads.add(threading.get_ident())
            varying = n >= 4  # the first batch: every column the same in its 4 rows
            yield (
                f"[{tag}] Por que “a maré” {n if varying else 0} sobe?\tÉ\\assim; 'aspas'",
                "contrafactual" if n % 3 else "associativa",
                json.dumps({"fonte": "ação", "n": n % 2 if varying else 0, "nota": None}),
                None,
                0,
                1.0 if n == 9 else 1,
                f"{tag}{n:039x}",
            )

    stored = {}
    for tag, made_apart in (("h", False), ("a", True)):
        project = ProjectFactory()
        constants = {k: v for k, v in _item_constants(project).items() if k not in fields}
        threads.clear()
        if made_apart:
            assert fast_insert(Item, fields, rows(tag), constants=constants, made_apart=True) == 14
            assert threads and threading.get_ident() not in threads
        else:
            with transaction.atomic():  # inside a transaction: filled on this connection
                assert fast_insert(Item, fields, rows(tag), constants=constants, made_apart=True) == 14
        items = list(Item.objects.filter(project=project).order_by("pk").values_list("pk", *fields))
        assert [pk for pk, *_rest in items] == list(range(items[0][0], items[0][0] + 14))
        stored[tag] = [
            (question.replace(f"[{tag}]", ""), *rest, key[1:]) for _pk, question, *rest, key in items
        ]
    assert stored["a"] == stored["h"]
    assert [row[5] for row in stored["a"]] == ["1"] * 9 + ["1.0"] + ["1"] * 4
    assert not [thread for thread in threading.enumerate() if thread.name == "insert-filled-apart"]
    with connection.cursor() as cursor:
        cursor.execute("PRAGMA database_list")
        assert not [name for _seq, name, _file in cursor.fetchall() if name.startswith("fast_insert")]


@pytest.mark.allow_skip
@pytest.mark.django_db(transaction=True)
def test_a_failure_on_either_side_of_rows_filled_apart_stops_both_and_detaches(monkeypatch):
    """An error while the second thread makes the rows reaches the caller; an insert that breaks a
    constraint raises the database's IntegrityError. Either way the thread ends and the scratch database is
    let go; the batches committed before the failure stay (each commits on its own, as outside a
    transaction every insert does: the import removes what it wrote), none after it."""
    from django.db import IntegrityError

    if connection.vendor != "sqlite":
        pytest.skip("on PostgreSQL an insert is one COPY")
    monkeypatch.setattr(bulk, "SQLITE_BATCH_ROWS", 5)
    monkeypatch.setattr(bulk, "SQLITE_STAGE_FROM_ROWS", 3)
    project = ProjectFactory()
    constants = {k: v for k, v in _item_constants(project).items() if k != "external_id"}
    fields = ["question", "text_key", "external_id"]

    def rows(count=30, fail_at=None, repeat_id=None):
        for n in range(count):
            if n == fail_at:
                raise ValueError("linha 12 ilegível")
            yield (f"Por que a chuva {n} molha?", f"{n:040x}", "x0" if n == repeat_id else f"x{n}")

    with pytest.raises(ValueError, match="linha 12"):
        fast_insert(Item, fields, rows(fail_at=12), constants=constants, made_apart=True)
    kept = set(Item.objects.filter(project=project).values_list("external_id", flat=True))
    assert kept <= {f"x{n}" for n in range(10)}  # at most the two batches made before the error
    Item.objects.filter(project=project).delete()

    with pytest.raises(IntegrityError):
        fast_insert(Item, fields, rows(300, repeat_id=7), constants=constants, made_apart=True)
    assert sorted(Item.objects.filter(project=project).values_list("external_id", flat=True)) == sorted(
        f"x{n}" for n in range(5)
    )
    assert not [thread for thread in threading.enumerate() if thread.name == "insert-filled-apart"]
    with connection.cursor() as cursor:
        cursor.execute("PRAGMA database_list")
        assert not [name for _seq, name, _file in cursor.fetchall() if name.startswith("fast_insert")]


@pytest.mark.allow_skip
@pytest.mark.django_db(transaction=True)
def test_rows_filled_apart_that_do_not_reach_the_table_raise_instead_of_being_lost(monkeypatch):
    """Were the scratch database the connection attaches not the one the thread fills (a connection opened
    without URIs would attach a file of that name instead), the move finds an empty table: the insert raises,
    naming how many rows of the batch arrived, instead of returning as if it had written them."""
    import sqlite3

    from django.db import DatabaseError

    if connection.vendor != "sqlite":
        pytest.skip("on PostgreSQL an insert is one COPY")
    monkeypatch.setattr(bulk, "SQLITE_STAGE_FROM_ROWS", 3)
    elsewhere = f"file:elsewhere_{uuid.uuid4().hex}?mode=memory&cache=shared"
    empty = sqlite3.connect(elsewhere, uri=True)
    for slot in range(2):
        empty.execute(f"CREATE TABLE s{slot} ({', '.join(f'c{n}' for n in range(2))})")
    made = bulk._FilledApart.__init__

    def attached_elsewhere(self, *args):
        made(self, *args)
        self.uri = elsewhere

    monkeypatch.setattr(bulk._FilledApart, "__init__", attached_elsewhere)
    project = ProjectFactory()
    constants = {k: v for k, v in _item_constants(project).items() if k not in ("question", "text_key")}
    rows = [(f"Por que {n}?", f"{n:040x}") for n in range(10)]
    try:
        with pytest.raises(DatabaseError, match="0 of a batch of 10 rows"):
            fast_insert(Item, ["question", "text_key"], rows, constants=constants, made_apart=True)
    finally:
        empty.close()
    assert not Item.objects.filter(project=project).exists()


def _item_constants(project) -> dict:
    now = timezone.now()
    return {
        "project_id": project.pk,
        **dict.fromkeys(
            ["status", "origin", "source", "context", "causal_class", "reference_answer", "external_id"], ""
        ),
        **{"answer_by": "", "round": 0, "version": 1, "position_in_group": 0},
        **{"created_at": now, "updated_at": now, "answer_provenance": "{}", "metadata": "{}"},
    }


@pytest.mark.django_db(transaction=True)
def test_a_streamed_insert_reports_every_n_rows_and_an_abandoned_one_leaves_nothing_uncommitted():
    """Outside a transaction (a worker's build), rows stream in with progress every ``every`` rows. When the
    work fails midway: on PostgreSQL (one COPY, committed by ``close``) nothing is written; on SQLite the
    batches handed over so far are written (each in a transaction of its own, by the writing thread, which
    reports them once committed) and the rest is not."""
    project = ProjectFactory()
    progress = []
    threads = threading.active_count()
    stream = bulk.StreamedInsert(
        Item,
        ["question", "text_key"],
        constants=_item_constants(project),
        every=3,
        on_progress=progress.append,
    )
    try:
        for n in range(5):
            stream.add((f"Por que “{n}”?\tÉ\\assim", f"{n:040x}"))
    finally:
        stream.abandon()

    assert progress == [3]
    assert threading.active_count() == threads
    kept = 0 if connection.vendor == "postgresql" else 3
    assert sorted(Item.objects.filter(project=project).values_list("question", flat=True)) == [
        f"Por que “{n}”?\tÉ\\assim" for n in range(kept)
    ]


@pytest.mark.django_db(transaction=True)
def test_a_closed_streamed_insert_writes_every_row_as_given():
    """``close`` commits every row, with the last progress at the total; text with tabs, backslashes, accents
    and quotes, numbers and NULLs arrive as given (on PostgreSQL through a binary COPY when every column's type
    allows it, as here, or a text one when not, as with the items' JSON and timestamps)."""
    from evaluation.models import Release, ReleaseItem

    project = ProjectFactory()
    release = Release.objects.create(project=project, version=1)
    records = [
        (None, "train", n, f"classe\t{n}", f'{{"id":"q{n}","question":"Por quê \\"{n}\\"?\\nÉ"}}')
        for n in range(7)
    ]
    records[1] = (None, "dev", 1, "", '{"q":"🙂 ç \\\\ \\u0000","n":-1}')  # an empty text, an emoji, a NUL
    progress = []
    stream = bulk.StreamedInsert(
        ReleaseItem,
        ["item_id", "split", "position", "causal_class", "data"],
        constants={"release_id": release.pk},
        every=3,
        on_progress=progress.append,
    )
    for record in records:
        stream.add(record)
    stream.close()

    assert progress == [3, 6, 7]
    stored = ReleaseItem.objects.filter(release=release).order_by("position")
    assert [(r.item_id, r.split, r.position, r.causal_class, r.data) for r in stored] == [
        (None, split, position, causal_class, json.loads(data))
        for _i, split, position, causal_class, data in records
    ]
    if connection.vendor == "postgresql":
        assert bulk._binary_copy_types(
            ReleaseItem, ["item_id", "split", "position", "causal_class", "data", "release"]
        )
        assert bulk._binary_copy_types(Item, ["question", "metadata"]) is None


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("bad", ["position taken twice", "no class"])
def test_a_streamed_insert_whose_batch_fails_raises_its_error_and_keeps_the_batches_before(bad):
    """A batch the database refuses (a position taken twice, a null in a text column that takes none) raises
    its error in the caller, at the next hand-over or at ``close``, and leaves no thread; the batches before it
    stay on SQLite (each committed on its own), nothing on PostgreSQL (one COPY)."""
    from django.db import IntegrityError

    from evaluation.models import Release, ReleaseItem

    release = Release.objects.create(project=ProjectFactory(), version=1)
    threads = threading.active_count()
    stream = bulk.StreamedInsert(
        ReleaseItem,
        ["item_id", "split", "position", "causal_class", "data"],
        constants={"release_id": release.pk},
        every=2,
    )
    with pytest.raises(IntegrityError):
        try:
            positions = (0, 1, 2, 2, 3, 4, 5, 6) if bad == "position taken twice" else range(8)
            for position in positions:
                no_class = bad == "no class" and position == 3
                stream.add((None, "test", position, None if no_class else "", "{}"))
            stream.close()
        finally:
            stream.abandon()
    assert threading.active_count() == threads
    kept = [] if connection.vendor == "postgresql" else [0, 1]
    assert (
        list(
            ReleaseItem.objects.filter(release=release)
            .order_by("position")
            .values_list("position", flat=True)
        )
        == kept
    )


@pytest.mark.django_db(transaction=True)
def test_read_ahead_gives_what_the_generator_gives_and_passes_on_its_error():
    """``read_ahead`` yields the producer's values in order (made in a thread with its own connection on
    PostgreSQL), raises the producer's error where it happened, and leaves no thread behind, even when the
    caller stops early."""
    project = ProjectFactory()
    Item.objects.bulk_create(Item(project=project, question=f"P{n}?", text_key=f"{n:040x}") for n in range(6))
    threads = threading.active_count()

    def chunks():
        ids = list(Item.objects.filter(project=project).order_by("pk").values_list("pk", flat=True))
        for begin in range(0, 6, 2):
            yield list(
                Item.objects.filter(pk__in=ids[begin : begin + 2])
                .order_by("pk")
                .values_list("question", flat=True)
            )

    assert list(bulk.read_ahead(chunks)) == [["P0?", "P1?"], ["P2?", "P3?"], ["P4?", "P5?"]]

    def failing():
        yield from chunks()
        raise ValueError("the third chunk is bad")

    seen = []
    with pytest.raises(ValueError, match="the third chunk is bad"):
        for chunk in bulk.read_ahead(failing):
            seen.append(chunk)
    assert len(seen) == 3

    reader = bulk.read_ahead(chunks)
    assert next(reader) == ["P0?", "P1?"]
    reader.close()
    assert threading.active_count() == threads


@pytest.mark.django_db(transaction=True)
def test_wal_checkpoints_aside_copy_the_log_in_a_thread_and_restore_the_setting():
    """On SQLite, inside ``wal_checkpoints_aside`` the connection's commits copy nothing into the database file
    themselves (automatic checkpoints off) and a thread copies the log there as they come; on leaving, after an
    error too, the thread is gone, the setting is back and every commit is in the file. Elsewhere nothing
    changes (no thread)."""
    project = ProjectFactory()
    threads = threading.active_count()

    def setting():
        with connection.cursor() as cursor:
            cursor.execute("PRAGMA wal_autocheckpoint")
            return cursor.fetchone()[0]

    def file_size():
        return os.path.getsize(connection.settings_dict["NAME"])

    def write(first):
        fast_insert(
            Item,
            ["question", "text_key"],
            ((f"Por que {n}? " + "é" * 2000, f"{n:040x}") for n in range(first, first + 500)),
            constants=_item_constants(project),
        )

    sqlite = connection.vendor == "sqlite"
    before = setting() if sqlite else None
    with bulk.wal_checkpoints_aside(every=0.01):
        assert threading.active_count() == threads + (1 if sqlite else 0)
        size = file_size() if sqlite else None
        write(0)  # about 2 MB, committed: on SQLite into the log only
        if sqlite:
            assert setting() == 0
            deadline = time.monotonic() + 10
            while file_size() <= size and time.monotonic() < deadline:
                time.sleep(0.01)
            assert file_size() > size  # the thread copied it
    assert threading.active_count() == threads

    size = file_size() if sqlite else None
    with pytest.raises(ValueError, match="stopped"), bulk.wal_checkpoints_aside(every=60):
        write(500)
        raise ValueError("stopped")
    assert threading.active_count() == threads
    assert Item.objects.filter(project=project).count() == 1000
    if sqlite:
        assert setting() == before
        assert file_size() > size  # the last pass, on leaving, copied the last commit


@pytest.mark.django_db(transaction=True)
def test_wal_checkpoints_aside_without_waiting_copy_the_last_commit_after_leaving():
    """``wait=False`` (an import): leaving does not wait for the copy. The setting is back at once, every commit
    is read back at once (from the log), and the thread copies the log into the file, then ends, on its own."""
    project = ProjectFactory()
    threads = threading.active_count()
    sqlite = connection.vendor == "sqlite"
    marker = f"marcador-{uuid.uuid4().hex}"  # in the database file only once the log is copied there
    if sqlite:
        with connection.cursor() as cursor:
            cursor.execute("PRAGMA wal_autocheckpoint")
            before = cursor.fetchone()[0]
    with bulk.wal_checkpoints_aside(every=60, wait=False):
        fast_insert(
            Item,
            ["question", "text_key"],
            ((f"Por que {n}? {marker}", f"{n:040x}") for n in range(500)),
            constants=_item_constants(project),
        )
    assert Item.objects.filter(project=project, question__contains=marker).count() == 500
    if not sqlite:
        assert threading.active_count() == threads
        return
    with connection.cursor() as cursor:
        cursor.execute("PRAGMA wal_autocheckpoint")
        assert cursor.fetchone()[0] == before

    def in_file() -> bool:
        with open(connection.settings_dict["NAME"], "rb") as handle:
            return marker.encode() in handle.read()

    deadline = time.monotonic() + 10
    while not (in_file() and threading.active_count() == threads) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert in_file()  # the thread copied the log
    assert threading.active_count() == threads


def test_in_many_finds_what_in_finds_for_ids_and_foreign_keys():
    """``in_many`` (one array parameter on PostgreSQL) selects the rows ``in`` selects, for keys and foreign
    keys, thousands of ids or none."""
    project, other = ProjectFactory(), ProjectFactory()
    items = [Item.objects.create(project=project, question=f"P{n}?", text_key=f"{n:040x}") for n in range(4)]
    Item.objects.create(project=other, question="Outra?", text_key="f" * 40)
    wanted = [items[0].pk, items[2].pk, *range(10**9, 10**9 + 3000)]

    assert list(Item.objects.filter(pk__in_many=wanted).order_by("pk")) == [items[0], items[2]]
    assert Item.objects.filter(project_id__in_many=[project.pk]).count() == 4
    assert Item.objects.filter(project__in=[project]).count() == 4
    assert not Item.objects.filter(pk__in_many=[]).exists()


@pytest.mark.django_db(transaction=True)
def test_reserved_ids_are_never_given_to_another_row_inside_a_transaction_or_outside():
    from tests.factories import ProjectFactory
    from topics.models import Topic

    project = ProjectFactory()
    with transaction.atomic():
        reserved = bulk.ReservedIds(Topic)
        first, second = reserved.next(), reserved.next()
        reserved.close()
    assert second > first
    # Outside a transaction (an import committing chunk by chunk) each id is taken in a short one of its own:
    # a row inserted meanwhile by the table's own numbering gets another id.
    reserved = bulk.ReservedIds(Topic)
    third = reserved.next()
    made = Topic.objects.create(project=project, label="meanwhile")
    fourth = reserved.next()
    reserved.close()
    assert third < made.pk < fourth
    Topic.objects.bulk_create(
        [Topic(pk=third, project=project, label="a"), Topic(pk=fourth, project=project, label="b")]
    )
