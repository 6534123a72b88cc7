"""JSON columns the way each database answers best, each with the plain ORM's answer elsewhere."""

from django.db import connection, connections
from django.db.models import BooleanField, CharField, Q
from django.db.models.expressions import RawSQL
from django.db.models.fields.json import KeyTextTransform, KeyTransform
from django.db.models.functions import Cast
from django.db.models.lookups import Exact


def json_key_condition(field: str, key: str, value: str, *, non_empty_index_of: str = "") -> Q:
    """Rows whose JSON object in ``field`` has ``key`` (with ``value`` if given, as text or as the number it
    spells). On PostgreSQL through containment, which a GIN index on the column answers; ``non_empty_index_of``
    names the table when that index is partial over non-empty objects: its condition is spelled out too, so the
    planner can use it."""
    if connection.vendor != "postgresql":
        text = Cast(KeyTextTransform(key, field), output_field=CharField())
        return Q(**{f"{field}__has_key": key}) & (Q(Exact(text, value)) if value else Q())
    non_empty = Q()
    if non_empty_index_of:
        quote = connection.ops.quote_name
        column = f"{quote(non_empty_index_of)}.{quote(field)} <> '{{}}'::jsonb"
        non_empty = Q(RawSQL(column, [], output_field=BooleanField()))
    if not value:
        return non_empty & Q(**{f"{field}__has_key": key})
    condition = Q(**{f"{field}__contains": {key: value}})
    for kind in (int, float):
        try:
            condition |= Q(**{f"{field}__contains": {key: kind(value)}})
            break
        except ValueError:
            continue
    return non_empty & condition


# The keys of JSON objects, listed by the database (``{column}`` and ``{table}`` quoted by the caller).
_OBJECT_KEYS_SQL = {
    "sqlite": (
        "SELECT DISTINCT entry.key FROM {table} AS source, json_each(source.{column}) AS entry "
        "WHERE json_type(source.{column}) = 'object' AND source.{pk} IN ({rows})"
    ),
    "postgresql": (
        "SELECT DISTINCT jsonb_object_keys(source.{column}) FROM {table} AS source "
        "WHERE jsonb_typeof(source.{column}) = 'object' AND source.{pk} IN ({rows})"
    ),
}


def json_object_keys(queryset, field: str) -> set[str] | None:
    """The distinct top-level keys of the JSON objects in ``field`` over the rows of ``queryset``, listed by
    the database without reading the objects into Python; None where the database cannot list them (the
    caller reads the objects instead)."""
    connection = connections[queryset.db]
    sql = _OBJECT_KEYS_SQL.get(connection.vendor)
    if sql is None:
        return None
    model, quote = queryset.model, connection.ops.quote_name
    rows_sql, params = queryset.values("pk").query.sql_with_params()
    statement = sql.format(
        table=quote(model._meta.db_table),
        column=quote(model._meta.get_field(field).column),
        pk=quote(model._meta.pk.column),
        rows=rows_sql,
    )
    with connection.cursor() as cursor:
        cursor.execute(statement, params)
        return {str(key) for (key,) in cursor.fetchall()}


class TextJSONKeyTransform(KeyTransform):
    """``field__key`` on JSON kept in a text column: PostgreSQL reads into the text as ``jsonb``."""

    def preprocess_lhs(self, compiler, connection):
        lhs, params, keys = super().preprocess_lhs(compiler, connection)
        if connection.vendor == "postgresql":
            lhs = f"({lhs})::jsonb"
        return lhs, params, keys
