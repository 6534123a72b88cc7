"""Querysets compiled to SQL once, then run many times with other values.

Building a queryset with subqueries and annotations and compiling it costs Django more Python than the
database spends answering it; the annotator's loop runs the same few such queries on every request, and that Python,
more than the database, was what the loop spent its time on. A ``CompiledQuery`` wraps a function
that builds the queryset (or a list of querysets to try in turn) from keyword values. The first
call for a database vendor and a *shape* builds it with placeholders standing in for the values,
compiles it, and notes where each placeholder landed among the SQL parameters; later calls put
the real values there and run the SQL as it is, turning rows into model instances as the ORM does.

    unanswered = CompiledQuery(lambda *, project_id: Item.objects.filter(project_id=project_id, ...)[:1])
    item = unanswered.first(project_id=project.pk)

Values are ints, strings, aware datetimes, or lists of these (a list's length is part of the
shape). What changes the SQL itself (a flag that adds a filter) goes in ``shape``, passed to the
builder as it is. A value the ORM writes into the SQL text, or transforms on its way to the
parameters, cannot be put back: compiling then fails, naming it, instead of running wrong SQL.
The querysets may lock rows (``select_for_update``) and follow foreign keys (``select_related``).

With the setting ``COMPILED_QUERIES`` off (environment variable of the same name), every query runs through
the plain ORM instead: the answers are the same, only slower.
"""

import datetime as dt
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from itertools import count

from django.conf import settings
from django.core.exceptions import EmptyResultSet, FullResultSet
from django.db import DEFAULT_DB_ALIAS, connections
from django.db.models import Model, QuerySet
from django.db.models.query import get_related_populators
from django.db.transaction import TransactionManagementError

# Placeholders for ints count down from here: far from the small constants a query holds, yet within
# even a small integer column's range (the ORM drops a comparison with a value out of a column's range
# as always true or false, which would compile the wrong SQL). The second compilation starts lower.
_FIRST_INT = 32_000
_SECOND_START = 300
_TEXT_MARK = "\ue000placeholder "


@dataclass(frozen=True)
class _Slot:
    """Where a parameter comes from: a value (``name``, an element of it when ``index`` is set,
    adapted for the database by ``adapt``), or a constant of the query when ``name`` is None."""

    name: str | None = None
    index: int | None = None
    adapt: Callable | None = None
    constant: object = None

    def value(self, values: dict):
        if self.name is None:
            return self.constant
        value = values[self.name] if self.index is None else values[self.name][self.index]
        return self.adapt(value) if self.adapt else value


@dataclass(frozen=True)
class _Compiled:
    sql: str
    slots: tuple[_Slot, ...]
    locks: bool
    model: type[Model]
    init_list: list[str]
    fields: slice
    converters: dict
    annotations: dict
    related_populators: list


class CompiledQuery:
    every: list["CompiledQuery"] = []  # all of them, for the test that compiles each shape the pages use

    def __init__(self, build: Callable[..., QuerySet | list[QuerySet]]):
        self.build = build
        self._compiled: dict[tuple, list[_Compiled]] = {}
        CompiledQuery.every.append(self)

    def first(self, *, shape: dict | None = None, using: str = DEFAULT_DB_ALIAS, **values) -> Model | None:
        """The first row of the query (the builder returns one queryset), or None."""
        if not settings.COMPILED_QUERIES:
            (queryset,) = self._plain(shape, values)
            return _first_row(queryset, using)
        (query,) = self._queries(shape, using, values)
        return next(_run(query, using, values), None)

    def each(
        self, *, shape: dict | None = None, using: str = DEFAULT_DB_ALIAS, **values
    ) -> Iterator[Callable[[], Model | None]]:
        """For a builder that returns querysets to try in turn: for each, a function that runs it and
        returns its first row or None (so the caller can do something between two queries)."""
        if not settings.COMPILED_QUERIES:
            for queryset in self._plain(shape, values):
                yield lambda queryset=queryset: _first_row(queryset, using)
            return
        for query in self._queries(shape, using, values):
            yield lambda query=query: next(_run(query, using, values), None)

    def _plain(self, shape: dict | None, values: dict) -> list[QuerySet]:
        """The querysets as the ORM runs them (``COMPILED_QUERIES`` off: a Django upgrade the compiler does
        not follow yet is a setting away, not a blocker)."""
        built = self.build(**(shape or {}), **values)
        return list(built) if isinstance(built, (list, tuple)) else [built]

    def _queries(self, shape: dict | None, using: str, values: dict) -> list[_Compiled]:
        shape = shape or {}
        key = (
            using,
            connections[using].vendor,
            *sorted(shape.items()),
            *(
                (name, len(value))
                for name, value in sorted(values.items())
                if isinstance(value, (list, tuple))
            ),
        )
        queries = self._compiled.get(key)
        if queries is None:
            queries = self._compiled[key] = self._compile(shape, using, values)
        return queries

    def _compile(self, shape: dict, using: str, values: dict) -> list[_Compiled]:
        """Build and compile twice, with two sets of placeholders: a parameter that holds a placeholder
        comes from that value, one that is the same both times is a constant of the query, and anything
        else (a value transformed, or written into the SQL text) cannot be compiled once."""
        first, second = (self._build(shape, using, values, start) for start in (0, _SECOND_START))
        compiled = []
        for (queryset, sql, params, compiler, origins), (_, other_sql, other_params, _, other_origins) in zip(
            first, second
        ):
            if sql != other_sql or len(params) != len(other_params):
                raise ValueError(
                    f"{queryset.model.__name__} query: a value is written into the SQL text; "
                    "pass it in shape or leave this query uncompiled"
                )
            slots = []
            for param, other in zip(params, other_params):
                slot = _lookup(origins, param)
                if slot is None and param == other:
                    slot = _Slot(constant=param)
                if slot is None or (slot.name is not None and _lookup(other_origins, other) != slot):
                    raise ValueError(
                        f"{queryset.model.__name__} query: a value changed on its way to the SQL "
                        f"parameters ({param!r}); pass it in shape or leave this query uncompiled"
                    )
                slots.append(slot)
            compiled.append(_finish(queryset, using, sql, slots, compiler))
        return compiled

    def _build(self, shape: dict, using: str, values: dict, start: int) -> list[tuple]:
        connection = connections[using]
        origins: dict = {}
        numbers = count(start)
        stand_ins = {}
        if (
            sum(len(value) if isinstance(value, (list, tuple)) else 1 for value in values.values())
            > _SECOND_START
        ):
            raise ValueError(f"a compiled query takes at most {_SECOND_START} values")
        for name, value in values.items():
            if isinstance(value, (list, tuple)):
                stand_ins[name] = [
                    _stand_in(name, element, next(numbers), connection, origins, index)
                    for index, element in enumerate(value)
                ]
            else:
                stand_ins[name] = _stand_in(name, value, next(numbers), connection, origins, None)
        built = self.build(**shape, **stand_ins)
        compiled = []
        for queryset in built if isinstance(built, (list, tuple)) else [built]:
            compiler = queryset.query.get_compiler(using=using)
            try:
                sql, params = compiler.as_sql()
            except (EmptyResultSet, FullResultSet) as error:
                raise ValueError(
                    f"{queryset.model.__name__} query: a value decided the SQL's outcome while "
                    f"compiling ({type(error).__name__}); pass it in shape or leave this query "
                    "uncompiled"
                ) from error
            compiled.append((queryset, sql, params, compiler, origins))
        return compiled


def _first_row(queryset: QuerySet, using: str) -> Model | None:
    return next(iter(queryset.using(using)), None)


def _stand_in(name: str, value, number: int, connection, origins: dict, index: int | None):
    """A placeholder for ``value`` that cannot be mistaken for anything else among the parameters."""
    if isinstance(value, bool) or not isinstance(value, (int, str, dt.datetime)):
        raise TypeError(
            f"{name}: a {type(value).__name__} cannot be a compiled query's value; "
            "pass ints, strings or datetimes, and put what changes the SQL in shape"
        )
    if isinstance(value, int):
        stand_in = _FIRST_INT - number
    elif isinstance(value, str):
        stand_in = f"{_TEXT_MARK}{number}"
    else:
        stand_in = dt.datetime(1901, 1, 1, microsecond=number + 1, tzinfo=dt.UTC)
        adapted = connection.ops.adapt_datetimefield_value(stand_in)
        if adapted != stand_in:  # SQLite takes text
            origins[adapted] = _Slot(name, index, connection.ops.adapt_datetimefield_value)
    origins[stand_in] = _Slot(name, index)
    return stand_in


def _lookup(origins: dict, param) -> _Slot | None:
    try:
        return origins.get(param)
    except TypeError:  # an unhashable constant (a list for an array lookup)
        return None


def _finish(queryset: QuerySet, using: str, sql: str, slots: list[_Slot], compiler) -> _Compiled:
    """What running the SQL needs to turn rows into model instances, as the ORM's ModelIterable does."""
    select, klass_info = compiler.select, compiler.klass_info
    fields = slice(klass_info["select_fields"][0], klass_info["select_fields"][-1] + 1)
    return _Compiled(
        sql=sql,
        slots=tuple(slots),
        locks=bool(queryset.query.select_for_update),
        model=klass_info["model"],
        init_list=[column[0].target.attname for column in select[fields]],
        fields=fields,
        converters=compiler.get_converters([column[0] for column in select[: compiler.col_count]]),
        annotations=dict(compiler.annotation_col_map or {}),
        related_populators=get_related_populators(klass_info, select, using),
    )


def _run(query: _Compiled, using: str, values: dict) -> Iterator[Model]:
    connection = connections[using]
    if query.locks and not connection.in_atomic_block:
        raise TransactionManagementError("select_for_update cannot be used outside of a transaction.")
    with connection.cursor() as cursor:
        cursor.execute(query.sql, [slot.value(values) for slot in query.slots])
        rows = cursor.fetchall()
    for row in rows:
        if query.converters:
            row = list(row)
            for position, (converters, expression) in query.converters.items():
                for converter in converters:
                    row[position] = converter(row[position], expression, connection)
        instance = query.model.from_db(using, query.init_list, row[query.fields])
        for populator in query.related_populators:
            populator.populate(row, instance)
        for name, position in query.annotations.items():
            setattr(instance, name, row[position])
        yield instance
