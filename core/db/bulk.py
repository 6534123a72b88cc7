"""Inserting many rows at once: COPY on PostgreSQL; on SQLite an ``INSERT … SELECT`` from a scratch table.

Django's ``bulk_create`` builds a model instance per row, which dominates the cost of a
large import. Here rows are plain tuples and the database does the rest. Callers pass values ready for the column: strings, numbers, None,
JSON already serialised with ``json.dumps``. Values that are the same for every
row (timestamps, foreign keys) go in ``constants`` and are prepared once.

Reading many rows in chunks overlaps with the work on them through ``read_ahead`` (PostgreSQL).
"""

import gc
import itertools
import queue
import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import ExitStack, contextmanager, suppress

import orjson
from django.db import DEFAULT_DB_ALIAS, DatabaseError, connection, connections, models, transaction
from django.db.models.lookups import In


@models.IntegerField.register_lookup
@models.ForeignKey.register_lookup
class InMany(In):
    """``field__in_many=ids``: ``IN`` for thousands of ids, which PostgreSQL gets as one array (``= ANY(%s)``).

    A list of thousands of placeholders costs Django and the driver tens of milliseconds per query to build
    and the server as much to parse. Integers only (ids); elsewhere a plain ``IN``."""

    lookup_name = "in_many"

    def get_prep_lookup(self):
        return [int(value) for value in self.rhs]

    def as_postgresql(self, compiler, connection):
        lhs, params = self.process_lhs(compiler, connection)
        return f"{lhs} = ANY(%s::bigint[])", (*params, self.rhs)


def fast_insert(
    model: type[models.Model],
    fields: Sequence[str],
    rows: Iterable[Sequence],
    constants: dict | None = None,
    *,
    made_apart: bool = False,
) -> int:
    """Insert ``rows`` (tuples in the order of ``fields``) and return how many were written.

    ``made_apart``: making ``rows`` touches no database (they come from memory or a file); on SQLite each batch
    is then made in a second thread while the database writes the one before — and, outside a transaction,
    put into its scratch table there too (``_sqlite_insert_filled_apart``; inside one, ``_BatchesAhead``)."""
    table, all_columns, constant_values = _insert_columns(model, fields, constants)
    written = 0
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            # psycopg 3: COPY ... FROM STDIN, rows adapted by the driver; its errors raised as Django's (an
            # IntegrityError is django.db's on both databases).
            with (
                connection.wrap_database_errors,
                cursor.cursor.copy(f"COPY {table} ({all_columns}) FROM STDIN") as copy,
            ):
                for row in rows:
                    copy.write_row((*row, *constant_values))
                    written += 1
        else:
            if made_apart and not connection.in_atomic_block:
                written = _sqlite_insert_filled_apart(
                    cursor, table, all_columns, len(fields), constant_values, rows
                )
            else:
                made = _BatchesAhead(rows) if made_apart else _Batches(rows)
                written = _sqlite_insert(cursor, table, all_columns, len(fields), constant_values, made)
            if written >= ANALYZE_AFTER_ROWS:
                _sqlite_analyze(cursor, table)
    return written


def _insert_columns(model, fields: Sequence[str], constants: dict | None) -> tuple[str, str, tuple]:
    """The quoted table, its quoted columns (``fields`` then ``constants``) and the constants prepared once."""
    constants = constants or {}
    meta = model._meta
    columns = [meta.get_field(name).column for name in [*fields, *constants]]
    constant_values = tuple(
        meta.get_field(name).get_db_prep_save(value, connection) for name, value in constants.items()
    )
    quote = connection.ops.quote_name
    return quote(meta.db_table), ", ".join(quote(column) for column in columns), constant_values


SQLITE_BATCH_ROWS = 5000
# From this many rows in a batch on, SQLite gets them through a scratch table (``_sqlite_insert``).
SQLITE_STAGE_FROM_ROWS = 50
# Each insert's own scratch table: a generator of rows that itself inserted (between two batches) keeps its own.
_scratch_tables = itertools.count()


def _sqlite_insert(cursor, table: str, columns: str, width: int, constant_values: tuple, made) -> int:
    """The rows of ``made`` (``_Batches``) into ``table`` on SQLite; return how many were written.

    A batch of many rows goes first into a scratch table in memory, without indexes or checks, then into the
    table with one ``INSERT … SELECT``, the constants given once. Each execution of a one-row ``INSERT`` opens
    the table and every one of its indexes again, which for a table with many indexes (the items) costs more
    than the scratch table's detour (figures: ``benchmarks/``). The rows keep their order, and so
    their ids; each value reaches its column as it would have bound directly (the scratch table's columns
    have no type, so nothing is converted on the way). A batch of a few rows is inserted directly.

    A column whose value is the same in every row of a batch (same value, same type: an import's empty
    context, its status, its batch) is bound once, in the ``INSERT … SELECT``, instead of into every row of
    the scratch table: binding holds Python's lock, value by value, and the items of an import vary in fewer
    than half of their columns.

    The ``INSERT … SELECT`` runs without Python's lock: while it does, ``made`` may make the next batch.

    Batches, not one generator: Django's ``executemany`` tees a generator (to peek at its first row), and the
    tee then holds every row until the end."""
    constants = f", {', '.join(['%s'] * len(constant_values))}" if constant_values else ""
    direct = f"INSERT INTO {table} ({columns}) VALUES ({', '.join(['%s'] * (width + len(constant_values)))})"
    scratch = None
    written = 0
    try:
        while (batch := made.next()) is not None:
            if len(batch) < SQLITE_STAGE_FROM_ROWS:
                cursor.executemany(direct, [(*row, *constant_values) for row in batch])
                made.make_next()
                written += len(batch)
                continue
            if scratch is None:
                scratch = f"temp.fast_insert_rows_{next(_scratch_tables)}"
                cursor.execute(f"CREATE TABLE {scratch} ({', '.join(f'c{n}' for n in range(width))})")
            staged = _Staged(batch, width)
            cursor.executemany(staged.fill(scratch, "%s"), staged.rows)
            made.make_next()
            cursor.execute(
                staged.move(table, columns, scratch, constants), (*staged.same_values, *constant_values)
            )
            cursor.execute(f"DELETE FROM {scratch}")
            written += len(batch)
    finally:
        made.close()
        # After a failed insert too (where a rolled-back transaction may have taken it already).
        if scratch is not None:
            with suppress(DatabaseError):
                cursor.execute(f"DROP TABLE IF EXISTS {scratch}")
    return written


def _sqlite_insert_filled_apart(
    cursor, table: str, columns: str, width: int, constant_values: tuple, rows
) -> int:
    """``_sqlite_insert`` with the rows made and put into the scratch tables by a second thread, on a connection
    of its own, while this one moves the batch before into ``table``.

    The scratch tables (two, used in turn) live in a database in memory that both connections share: the
    thread fills one while this connection reads the other, so the filling (which binds values one by one,
    holding Python's lock) goes on beside the ``INSERT … SELECT`` (which holds none). Outside a transaction
    only: a database is attached (never inside one)."""
    constants = f", {', '.join(['%s'] * len(constant_values))}" if constant_values else ""
    direct = f"INSERT INTO {table} ({columns}) VALUES ({', '.join(['%s'] * (width + len(constant_values)))})"
    written = 0
    with _FilledApart(width, rows) as filled:
        cursor.execute(f"ATTACH DATABASE %s AS {filled.alias}", [filled.uri])
        try:
            while (batch := filled.next()) is not None:
                if isinstance(batch, list):
                    cursor.executemany(direct, [(*row, *constant_values) for row in batch])
                    written += len(batch)
                    continue
                slot, staged = batch
                scratch = f"{filled.alias}.s{slot}"
                cursor.execute(
                    staged.move(table, columns, scratch, constants), (*staged.same_values, *constant_values)
                )
                # Fewer: not the thread's table (as a connection opened without URIs would attach).
                if cursor.rowcount != staged.count:
                    raise DatabaseError(
                        f"{cursor.rowcount} of a batch of {staged.count} rows reached {table}"
                    )
                filled.done(slot)
                written += staged.count
        finally:
            with suppress(DatabaseError):
                cursor.execute(f"DETACH DATABASE {filled.alias}")
    return written


class _FilledApart:
    """Batches of ``rows`` made, and put into scratch tables, by a thread of its own (``_sqlite_insert_filled_apart``).

    ``next()`` gives a filled table as ``(slot, _Staged)``, a short batch as its list of rows, or None at the
    end; ``done(slot)`` lets the thread fill that table again."""

    SLOTS = 2

    def __init__(self, width: int, rows: Iterable):
        number = next(_scratch_tables)
        self.alias = f"fast_insert_scratch_{number}"
        self.uri = f"file:fast_insert_{id(self)}_{number}?mode=memory&cache=shared"
        self.width = width
        self._db = sqlite3.connect(self.uri, uri=True, check_same_thread=False, isolation_level=None)
        for slot in range(self.SLOTS):
            self._db.execute(f"CREATE TABLE s{slot} ({', '.join(f'c{n}' for n in range(width))})")
        self._rows = rows
        self._free: queue.SimpleQueue = queue.SimpleQueue()
        for slot in range(self.SLOTS):
            self._free.put(slot)
        self._ready: queue.SimpleQueue = queue.SimpleQueue()
        self._stop = False
        self._thread = threading.Thread(target=self._work, name="insert-filled-apart", daemon=True)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc_info) -> None:
        self._stop = True
        for _slot in range(self.SLOTS):
            self._free.put(None)
        self._thread.join()
        self._db.close()

    def next(self):
        batch, error = self._ready.get()
        if error is not None:
            raise error
        return batch

    def done(self, slot: int) -> None:
        self._free.put(slot)

    def _work(self) -> None:
        try:
            for batch in batches(self._rows, SQLITE_BATCH_ROWS):
                if self._stop:
                    return
                if len(batch) < SQLITE_STAGE_FROM_ROWS:
                    self._ready.put((batch, None))
                    continue
                slot = self._free.get()
                if slot is None:
                    return
                staged = _Staged(batch, self.width)
                self._db.execute("BEGIN")
                self._db.execute(f"DELETE FROM s{slot}")
                self._db.executemany(staged.fill(f"s{slot}", "?"), staged.rows)
                self._db.execute("COMMIT")
                self._ready.put(((slot, staged), None))
            self._ready.put((None, None))
        except BaseException as exc:  # raised by the insert at its next batch
            self._ready.put((None, exc))


class _Staged:
    """A batch as it goes through a scratch table: the values of the columns that vary, row by row (``rows``,
    to fill the table with), and of those the same in every row, once (``same_values``, bound in the move)."""

    def __init__(self, batch: list, width: int):
        by_column = list(zip(*batch, strict=True))
        self.same = [_same_throughout(column) for column in by_column]
        if all(self.same):
            self.same[0] = False  # the scratch table's rows say how many rows there are
        self.varying = [n for n in range(width) if not self.same[n]]
        self.rows = list(zip(*(by_column[n] for n in self.varying)))
        self.same_values = tuple(column[0] for column, same in zip(by_column, self.same, strict=True) if same)
        self.count = len(batch)

    def fill(self, scratch: str, mark: str) -> str:
        """The statement that puts a row into ``scratch``; ``mark``: the connection's parameter mark."""
        return (
            f"INSERT INTO {scratch} ({', '.join(f'c{n}' for n in self.varying)}) "
            f"VALUES ({', '.join([mark] * len(self.varying))})"
        )

    def move(self, table: str, columns: str, scratch: str, constants: str) -> str:
        """The statement that moves the rows of ``scratch`` into ``table``, in order, with the values bound once."""
        selected = ", ".join("%s" if same else f"c{n}" for n, same in enumerate(self.same))
        return f"INSERT INTO {table} ({columns}) SELECT {selected}{constants} FROM {scratch} ORDER BY rowid"


def _same_throughout(column: tuple) -> bool:
    """Whether every value of ``column`` equals its first and is of its type (1 and True are not the same)."""
    first = column[0]
    return column.count(first) == len(column) and len(set(map(type, column))) == 1


class _Batches:
    """``rows`` in batches of ``SQLITE_BATCH_ROWS``: ``next()`` gives the next one (None at the end), made when
    asked for; ``make_next()`` says the next will be asked for soon."""

    def __init__(self, rows: Iterable):
        self._batches = batches(rows, SQLITE_BATCH_ROWS)

    def next(self) -> list | None:
        return next(self._batches, None)

    def make_next(self) -> None:
        pass

    def close(self) -> None:
        pass


class _BatchesAhead(_Batches):
    """``_Batches`` made in a second thread: ``make_next()`` starts the next batch there, and ``next()`` waits for
    it. The insert calls ``make_next()`` just before its ``INSERT … SELECT``, which holds no Python lock, so the
    two cores work at once: the rows' making hides behind the database's writing, which takes as long or
    longer. The thread only makes rows between those two calls: while the insert binds rows
    one by one (``executemany``, which takes and gives back Python's lock for each row), a thread busy in Python
    would make every row wait for its turn."""

    def __init__(self, rows: Iterable):
        super().__init__(rows)
        self._go = threading.Semaphore(1)  # the first batch at once
        self._made: queue.SimpleQueue = queue.SimpleQueue()
        self._stop = False
        self._thread = threading.Thread(target=self._work, name="insert-ahead", daemon=True)
        self._thread.start()

    def _work(self) -> None:
        try:
            while True:
                self._go.acquire()
                if self._stop:
                    return
                batch = super().next()
                self._made.put((batch, None))
                if batch is None:
                    return
        except BaseException as exc:  # handed to the insert, which raises it
            self._made.put((None, exc))

    def next(self) -> list | None:
        batch, error = self._made.get()
        if error is not None:
            raise error
        return batch

    def make_next(self) -> None:
        self._go.release()

    def close(self) -> None:
        self._stop = True
        self._go.release()
        self._thread.join()


@contextmanager
def gc_paused() -> Iterator[None]:
    """No cyclic garbage collection inside: rows and records made by the hundred thousand hold no cycles, and
    each collection would walk every one held so far, so the collections' cost grows with the square of the
    rows held."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def batches(rows: Iterable, size: int) -> Iterator[list]:
    """``rows`` as lists of ``size`` (the last one shorter)."""
    batch = []
    for row in rows:
        batch.append(row)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


# SQLite keeps no statistics unless asked (PostgreSQL's autovacuum gathers its own). Without them its
# planner guesses, and for the queue's queries on a large project it guesses a scan of the whole project
# where a partial index answers at once. A sampled ANALYZE is cheap next to a large write.
ANALYZE_AFTER_ROWS = 10_000


def _sqlite_analyze(cursor, table: str) -> None:
    cursor.execute("PRAGMA analysis_limit = 1000")  # sample each index instead of reading all of it
    cursor.execute(f"ANALYZE {table}")


def fast_update(model: type[models.Model], fields: Sequence[str], objects: Iterable[models.Model]) -> int:
    """Write ``fields`` of each of ``objects`` (by primary key) in one executemany.

    Django's ``bulk_update`` builds a CASE expression per field and object, which costs
    milliseconds per row in Python; this prepares each value once and lets the driver
    batch the statements. ``auto_now`` fields are not touched: set them yourself.
    """
    meta = model._meta
    targets = [meta.get_field(name) for name in fields]
    assignments = ", ".join(f"{connection.ops.quote_name(field.column)} = %s" for field in targets)
    sql = (
        f"UPDATE {connection.ops.quote_name(meta.db_table)} SET {assignments} "
        f"WHERE {connection.ops.quote_name(meta.pk.column)} = %s"
    )
    # The thread's connection itself, looked up once: through the ``connection`` proxy every value's
    # preparation paid a thread-local lookup (a few % of a benchmark run's CPU, profiled).
    db = connections[DEFAULT_DB_ALIAS]
    preparers = [(field.attname, field.get_db_prep_save) for field in targets]
    params = [
        (*(prepare(getattr(obj, attname), db) for attname, prepare in preparers), obj.pk) for obj in objects
    ]
    if not params:
        return 0
    with connection.cursor() as cursor:
        if db.vendor == "postgresql" and len(params) >= COPY_UPDATE_ROWS:
            _update_from_copy(cursor, meta, targets, params)
        else:
            cursor.executemany(sql, params)
    return len(params)


# From this many rows on, PostgreSQL gets the new values by COPY into a temporary table and updates the rows in
# one statement, cheaper than a pipelined executemany for thousands of rows, while the temporary table's
# creation would dominate for a handful of rows.
COPY_UPDATE_ROWS = 500


def _update_from_copy(cursor, meta, targets, params) -> None:
    quote = connection.ops.quote_name
    table, pk = quote(meta.db_table), quote(meta.pk.column)
    scratch = quote(f"fast_update_{meta.db_table}")
    columns = [quote(field.column) for field in targets]
    definitions = ", ".join(
        f"{column} {field.db_type(connection)}" for column, field in zip(columns, targets, strict=True)
    )
    cursor.execute(f"DROP TABLE IF EXISTS {scratch}")
    cursor.execute(
        f"CREATE TEMPORARY TABLE {scratch} ({definitions}, {pk} {meta.pk.rel_db_type(connection)})"
    )
    with cursor.cursor.copy(f"COPY {scratch} ({', '.join(columns)}, {pk}) FROM STDIN") as copy:
        for row in params:
            copy.write_row(row)
    # Its statistics, so the planner sees a few thousand rows to look up by key, not an unknown table worth
    # a scan of the whole target (without them it guesses a large table and hashes every item of the database).
    cursor.execute(f"ANALYZE {scratch}")
    assignments = ", ".join(f"{column} = new.{column}" for column in columns)
    cursor.execute(f"UPDATE {table} SET {assignments} FROM {scratch} AS new WHERE {table}.{pk} = new.{pk}")
    # Not in a ``finally``: after an error the transaction is aborted (and the table goes with it).
    cursor.execute(f"DROP TABLE {scratch}")


class StreamAbandoned(Exception):
    """The work feeding a ``StreamedInsert`` failed; its uncommitted rows are dropped."""


class StreamedInsert:
    """Rows inserted as they are made: ``add()`` each, ``close()`` to write the rest and commit, or ``abandon()``.
    ``on_progress(rows so far)`` is called every ``every`` rows.

    On PostgreSQL, outside any transaction, the rows go through one COPY on a second connection, sent as they
    come, in binary where every column's type allows it: the server ingests them while this
    process makes the next ones, two cores busy instead of one after the other. ``close()`` commits them all;
    ``abandon()`` drops them all. On SQLite, outside any transaction, every ``every`` rows go to a thread that
    writes them on its own connection in a transaction of their own (``_WrittenApart``), while this thread
    makes the next ones; ``on_progress`` is then called there, once they are committed. ``abandon()`` lets
    the batches already handed over be written and drops the rows not yet handed over. Otherwise (inside a
    transaction, a test's, where a second connection could not see its uncommitted rows; a column of another
    type than text or integer) the rows are written here with ``fast_insert`` every ``every`` rows.
    """

    def __init__(
        self,
        model,
        fields: Sequence[str],
        *,
        constants: dict | None = None,
        every: int,
        on_progress: Callable[[int], None] = lambda written: None,
    ):
        self.model, self.fields, self.constants = model, fields, constants or {}
        self.every, self.on_progress = every, on_progress
        self.written = 0
        self.pending: list[tuple] = []
        self.side = None
        self.apart = None
        if connection.vendor == "postgresql" and not connection.in_atomic_block:
            self.side = connections.create_connection(DEFAULT_DB_ALIAS)
            self.side.ensure_connection()
            self.table, self.columns, self.constant_values = _insert_columns(model, fields, constants)
            self.binary_types = _binary_copy_types(model, [*fields, *self.constants])
        elif _WrittenApart.suits(model, fields):
            self.apart = _WrittenApart(model, fields, self.constants, on_progress)
        self._copy = None

    def add(self, row: Sequence) -> None:
        if self.side is None:
            self.pending.append(row)
            if len(self.pending) >= self.every:
                if self.apart is not None:
                    self.apart.hand(self.pending)
                    self.pending = []
                else:
                    self._write_pending()
            return
        if self._copy is None:
            self._open_copy()
        try:
            self._copy.write_row((*row, *self.constant_values))
        except Exception:
            with (
                self.side.wrap_database_errors
            ):  # the server's refusal raised as Django's error, as elsewhere
                raise
        self.written += 1
        if self.written % self.every == 0:
            self.on_progress(self.written)

    def close(self) -> None:
        """Write and commit what is left, and let the second connection go."""
        try:
            if self.apart is not None:
                if self.pending:
                    self.apart.hand(self.pending)
                    self.pending = []
                self.apart.finish()
            elif self.pending:
                self._write_pending()
            if self._copy is not None:
                self._copy = None
                with self.side.wrap_database_errors:
                    self._open.close()  # ends the COPY, then commits
                if self.written % self.every:
                    self.on_progress(self.written)
        finally:
            self.abandon()

    def abandon(self) -> None:
        """Let the second connection go; an unfinished COPY's rows go with it (never committed)."""
        if self._copy is not None:
            self._copy = None
            with suppress(Exception):  # the COPY fails, its sending thread ends, its transaction rolls back
                self._open.__exit__(StreamAbandoned, StreamAbandoned(), None)
        if self.side is not None:
            self.side.close()
            self.side = None
        if self.apart is not None:
            self.apart.stop()

    def _write_pending(self) -> None:
        with transaction.atomic():
            commit_without_waiting_for_disk()
            fast_insert(self.model, self.fields, self.pending, self.constants)
        self.written += len(self.pending)
        self.pending = []
        self.on_progress(self.written)

    def _open_copy(self) -> None:
        raw = self.side.connection
        self._open = ExitStack()
        self._open.enter_context(raw.transaction())
        raw.execute("SET LOCAL synchronous_commit TO OFF")  # as commit_without_waiting_for_disk
        cursor = self._open.enter_context(raw.cursor())
        binary = " (FORMAT BINARY)" if self.binary_types else ""
        sql = f"COPY {self.table} ({self.columns}) FROM STDIN{binary}"
        self._copy = self._open.enter_context(cursor.copy(sql))
        if self.binary_types:
            self._copy.set_types(self.binary_types)


class _WrittenApart:
    """Batches of rows written into a SQLite table by a thread of its own, on its own connection, each batch in
    a transaction of its own, while the caller makes the next batch.

    The whole insert of a batch is one statement that holds no Python lock: its text values go to the
    database as one blob per column (their UTF-8 bytes end to end), every other value, and each text's place in
    its blob, as one JSON array, and ``INSERT … SELECT`` takes them apart (``json_each``, ``substr``) in the
    rows' order. Bound row by row instead, the thread would wait for Python's lock at every row while the
    caller holds it; as one statement, the writing moves to the other core while the caller makes the next
    batch. A text reaches its column as the same
    text a bound ``str`` would; an integer, a boolean (0 or 1) or None as itself. Only for columns of text and
    integer types (``suits``)."""

    TEXT_TYPES = ("varchar", "text", "char")
    SCALAR_TYPES = ("integer", "bigint", "smallint", "bool")

    @classmethod
    def suits(cls, model, fields: Sequence[str]) -> bool:
        if connection.vendor != "sqlite" or connection.in_atomic_block or connection.is_in_memory_db():
            return False
        if sqlite3.sqlite_version_info < (3, 38):  # ``->>``
            return False
        return all(cls._kind(model._meta.get_field(name).db_type(connection)) is not None for name in fields)

    @classmethod
    def _kind(cls, db_type: str | None) -> str | None:
        kind = (db_type or "").split("(")[0].split(" ")[0].lower()
        return "text" if kind in cls.TEXT_TYPES else "scalar" if kind in cls.SCALAR_TYPES else None

    def __init__(self, model, fields: Sequence[str], constants: dict, on_progress: Callable[[int], None]):
        table, columns, self.constant_values = _insert_columns(model, fields, constants)
        self.texts = [
            self._kind(model._meta.get_field(name).db_type(connection)) == "text" for name in fields
        ]
        selected = [
            f"CAST(substr(%s, value ->> {2 * index}, value ->> {2 * index + 1}) AS TEXT)"
            if text
            else f"value ->> {2 * index}"
            for index, text in enumerate(self.texts)
        ]
        selected += ["%s"] * len(self.constant_values)
        self.sql = (
            f"INSERT INTO {table} ({columns}) SELECT {', '.join(selected)} FROM json_each(%s) ORDER BY key"
        )
        self.on_progress = on_progress
        self.written = 0
        self.error: BaseException | None = None
        self._batches: queue.Queue = queue.Queue(maxsize=1)  # one waits while one is written
        self._thread = threading.Thread(target=self._work, name="insert-apart", daemon=True)
        self._thread.start()

    def hand(self, rows: list[tuple]) -> None:
        """Queue ``rows`` to be written (waiting while a batch already waits); raise the thread's error."""
        params = self._params(rows)
        while self._thread.is_alive():
            try:
                self._batches.put((params, len(rows)), timeout=0.05)
                return
            except queue.Full:
                continue
        self._raise()
        raise RuntimeError("rows handed over after the writing stopped")

    def finish(self) -> None:
        """Wait until every batch handed over is written; raise the thread's error."""
        self.stop()
        self._raise()

    def stop(self) -> None:
        """End the thread once every batch handed over is written (or one failed)."""
        while self._thread.is_alive():
            with suppress(queue.Full):
                self._batches.put(None, timeout=0.05)
                break
        self._thread.join()

    def _raise(self) -> None:
        if self.error is not None:
            error, self.error = self.error, None
            raise error

    def _params(self, rows: list[tuple]) -> list:
        """The statement's parameters for ``rows``: a blob per text column, the constants, then the rows as JSON,
        two entries per column: a text's place in its blob (1-based, as ``substr`` counts) and length, or
        another value and a null. Made a column at a time, by functions that loop in C."""
        blobs, entries = [], []
        nulls = [None] * len(rows)
        for column, text in zip(zip(*rows, strict=True), self.texts, strict=True):
            if not text:
                entries += (column, nulls)
                continue
            missing = [index for index, value in enumerate(column) if value is None] if None in column else []
            encoded = (
                [b"" if value is None else value.encode() for value in column]
                if missing
                else [*map(str.encode, column)]
            )
            lengths = [*map(len, encoded)]
            # Each blob starts with one byte no text uses: ``substr`` of an empty blob is null, not an empty text.
            places = [*itertools.accumulate(lengths, initial=2)][:-1]
            for index in missing:
                places[index] = None
            blobs.append(b"-" + b"".join(encoded))
            entries += (places, lengths)
        return [*blobs, *self.constant_values, orjson.dumps([*zip(*entries)]).decode()]

    def _work(self) -> None:
        try:
            while (batch := self._batches.get()) is not None:
                params, count = batch
                with transaction.atomic(), connection.cursor() as cursor:
                    cursor.execute(self.sql, params)
                self.written += count
                self.on_progress(self.written)
        except BaseException as exc:  # raised by the caller at its next hand-over or at the end
            self.error = exc
        finally:
            connections.close_all()  # this thread's own connection


# Column types a binary COPY takes straight from Python's values (ints, strings, booleans, floats). Binary saves
# the server parsing each value's text and the client escaping it, the larger part of a text COPY's cost. A
# column of any other type (JSON, timestamps) keeps the whole COPY in text.
BINARY_COPY_TYPES = {"bigint", "integer", "smallint", "text", "varchar", "boolean", "double precision"}


def _binary_copy_types(model, fields: Sequence[str]) -> list[str] | None:
    types = [model._meta.get_field(name).db_type(connection).split("(")[0] for name in fields]
    return types if all(kind in BINARY_COPY_TYPES for kind in types) else None


def commit_without_waiting_for_disk() -> None:
    """On PostgreSQL, this transaction's commit does not wait for the disk (``SET LOCAL``: this one only).

    For writes that a crash may lose: those a later, durable commit completes (the work that made them is
    started again from nothing), or those nobody misses (an item handed out to an annotator)."""
    connection = transaction.get_connection()
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SET LOCAL synchronous_commit TO OFF")


CHECKPOINT_THREAD = "wal-checkpoints"


@contextmanager
def wal_checkpoints_aside(*, every: float = 0.02, wait: bool = True) -> Iterator[None]:
    """On SQLite, the checkpoints of this connection's commits run in a thread of their own while inside.

    A commit that leaves the write-ahead log past 1,000 pages (4 MB) copies the log into the database file itself
    before it returns (SQLite's automatic checkpoint), so a large write waits for that copy at every commit.
    Inside, this connection's automatic checkpoints are off, and a second connection
    runs ``wal_checkpoint(PASSIVE)`` in a thread every ``every`` seconds: the copy holds no Python lock, so it
    runs on the other core, and a passive checkpoint never blocks the writer or a reader. On leaving, the
    setting is restored and the last checkpoint is waited for, so the log is back in the file as before; with
    ``wait=False`` the thread makes that last copy on its own. Nobody needs to wait for it: what was committed
    is in the log, durable and seen by every reader; the copy only keeps the log short.

    Nothing changes on PostgreSQL, for an in-memory database, or inside a transaction (a test's, which commits
    nothing)."""
    if connection.vendor != "sqlite" or connection.in_atomic_block or connection.is_in_memory_db():
        yield
        return
    with connection.cursor() as cursor:
        cursor.execute("PRAGMA journal_mode")
        wal = cursor.fetchone()[0] == "wal"
        cursor.execute("PRAGMA wal_autocheckpoint")
        pages = cursor.fetchone()[0]
        if wal:
            cursor.execute("PRAGMA wal_autocheckpoint = 0")
    if not wal:
        yield
        return
    leaving = threading.Event()

    def work() -> None:
        side = connections.create_connection(connection.alias)
        try:
            side.ensure_connection()
            while True:
                last = leaving.is_set()  # read first: the last pass then holds every commit made inside
                # A failed pass (busy, say) leaves the log whole: the next pass, or a later commit, copies it.
                with suppress(sqlite3.Error):
                    side.connection.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
                if last:
                    return
                leaving.wait(every)
        finally:
            side.close()

    thread = threading.Thread(target=work, name=CHECKPOINT_THREAD, daemon=True)
    thread.start()
    try:
        yield
    finally:
        with connection.cursor() as cursor:
            cursor.execute(f"PRAGMA wal_autocheckpoint = {int(pages)}")
        leaving.set()
        if wait:
            thread.join()


def read_ahead(produce: Callable[[], Iterator], *, depth: int = 2) -> Iterator:
    """The values of ``produce()``, made in a thread on its own database connection up to ``depth`` ahead of
    the caller, who works on one while the next is read.

    For reads of many chunks that each wait on a PostgreSQL server: the thread waits (without Python's lock)
    while the caller builds, so the two overlap instead of adding up. Each of the thread's queries sees what is
    committed, as the caller's own would outside a transaction. ``produce()`` runs here instead, as a plain
    generator, on SQLite (the database works inside this process, so a thread would only contend for Python's
    lock and slow the caller down) and inside a transaction (a test's: another
    connection could not see its uncommitted rows)."""
    if connection.vendor != "postgresql" or connection.in_atomic_block:
        yield from produce()
        return
    handed: queue.Queue = queue.Queue(maxsize=depth)
    stop = threading.Event()
    end = object()

    def hand(value, error=None) -> bool:
        while not stop.is_set():
            try:
                handed.put((value, error), timeout=0.05)
                return True
            except queue.Full:
                continue
        return False

    def work() -> None:
        try:
            for value in produce():
                if not hand(value):
                    return
            hand(end)
        except BaseException as exc:  # handed to the caller, who raises it
            hand(end, exc)
        finally:
            connections.close_all()  # this thread's connections only (they are per thread)

    thread = threading.Thread(target=work, name="read-ahead", daemon=True)
    thread.start()
    try:
        while True:
            value, error = handed.get()
            if value is end:
                if error is not None:
                    raise error
                return
            yield value
    finally:
        stop.set()
        thread.join()


@contextmanager
def written_aside(write: Callable[[list], object]) -> Iterator[Callable[[list], None]]:
    """A ``hand(chunk)`` that has ``write(chunk)`` done in a thread on its own database connection, one chunk
    at a time and in the order handed, while the caller makes the next one.

    For writes that each commit on their own and wait on a PostgreSQL server (an import's chunks: a COPY, then
    the server updating the table's indexes): the thread waits without Python's lock while the caller's Python
    work goes on, so the two overlap instead of adding up. At most one chunk waits while one is written. An
    error of ``write`` is raised at the next ``hand`` or on leaving; on leaving, every chunk handed over has
    been written (or one failed) and the thread's connection is closed, so what follows sees every write.
    ``write`` runs here instead, as a plain call, on SQLite (the database works inside this process: a thread
    only contends for Python's lock) and inside a transaction (a test's: another connection could not see its
    uncommitted rows)."""
    if connection.vendor != "postgresql" or connection.in_atomic_block:
        yield write
        return
    handed: queue.Queue = queue.Queue(maxsize=1)
    failed: list[BaseException] = []
    end = object()

    def work() -> None:
        try:
            while (chunk := handed.get()) is not end:
                write(chunk)
        except BaseException as exc:  # raised by the caller at its next hand-over or on leaving
            failed.append(exc)
            while handed.get() is not end:  # the chunks still handed over are only let through
                pass
        finally:
            connections.close_all()  # this thread's connections only (they are per thread)

    def hand(chunk: list) -> None:
        if failed:
            raise failed[0]
        handed.put(chunk)

    thread = threading.Thread(target=work, name="write-aside", daemon=True)
    thread.start()
    try:
        yield hand
    finally:
        handed.put(end)
        thread.join()
    if failed:
        raise failed[0]


class ReservedIds:
    """Ids for rows of ``model`` that the current transaction (or, outside one, a later one) inserts, handed out without a query on
    its connection (which a COPY may hold, or which another thread may be using): an import gives each new
    topic its id when it first meets it, in the thread making the items' rows, and writes the topics at its end.

    On PostgreSQL each id comes from the table's sequence, through a second connection opened at the first
    one (a sequence hands a number out once, whatever becomes of the transaction; an unused one is a gap). On
    SQLite ids count on from the highest ever given (``sqlite_sequence``, kept by ``AUTOINCREMENT``), which
    no other connection can take meanwhile: every transaction holds the write lock from its start
    (``IMMEDIATE``, in the settings). ``close()`` lets the second connection go."""

    def __init__(self, model: type[models.Model]):
        self.table = model._meta.db_table
        quote = connection.ops.quote_name
        self.highest_sql = f"SELECT max({quote(model._meta.pk.column)}) FROM {quote(self.table)}"
        self.vendor = connection.vendor
        self.side = None
        # Outside a transaction (an import that commits chunk by chunk), SQLite's ids are taken through the
        # second connection too, each in a short transaction of its own that moves ``sqlite_sequence`` on.
        self.counted = connection.vendor != "postgresql" and connection.in_atomic_block
        if connection.vendor != "postgresql" and not self.counted:
            return
        with connection.cursor() as cursor:
            if not self.counted:
                cursor.execute("SELECT pg_get_serial_sequence(%s, %s)", [self.table, model._meta.pk.column])
                self.sequence = cursor.fetchone()[0]
                return
            if connection.settings_dict["OPTIONS"].get("transaction_mode") != "IMMEDIATE":
                raise RuntimeError(
                    "SQLite ids are counted on only under the write lock of IMMEDIATE transactions"
                )
            cursor.execute("SELECT max(seq) FROM sqlite_sequence WHERE name = %s", [self.table])
            counted = cursor.fetchone()[0] or 0
            quote = connection.ops.quote_name
            cursor.execute(f"SELECT max({quote(model._meta.pk.column)}) FROM {quote(self.table)}")
            self.last = max(counted, cursor.fetchone()[0] or 0)

    def next(self) -> int:
        if self.counted:
            self.last += 1
            return self.last
        if self.side is None:
            self.side = connections.create_connection(DEFAULT_DB_ALIAS)
            self.side.inc_thread_sharing()  # made in the thread making rows, closed by the import's
        if self.vendor != "postgresql":
            return self._sqlite_next()
        with self.side.cursor() as cursor:
            cursor.execute("SELECT nextval(%s)", [self.sequence])
            return cursor.fetchone()[0]

    def _sqlite_next(self) -> int:
        """The next id of the table, taken from ``sqlite_sequence`` (``AUTOINCREMENT`` then never gives it)."""
        self.side.ensure_connection()
        raw = self.side.connection
        raw.execute("BEGIN IMMEDIATE")
        try:
            row = raw.execute("SELECT seq FROM sqlite_sequence WHERE name = ?", [self.table]).fetchone()
            highest = raw.execute(self.highest_sql).fetchone()[0]
            taken = max(row[0] if row else 0, highest or 0) + 1
            if row:
                raw.execute("UPDATE sqlite_sequence SET seq = ? WHERE name = ?", [taken, self.table])
            else:
                raw.execute("INSERT INTO sqlite_sequence (name, seq) VALUES (?, ?)", [self.table, taken])
        except BaseException:
            raw.execute("ROLLBACK")
            raise
        raw.execute("COMMIT")
        return taken

    def close(self) -> None:
        if self.side is not None:
            self.side.close()
            self.side = None


def one_writer_at_a_time(using: str = "default") -> bool:
    """Whether the database lets one transaction write at a time (SQLite): a writer that reads slowly inside
    its transaction then holds back every other write, so it reads first."""
    return connections[using].vendor == "sqlite"
