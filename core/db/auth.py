"""The two reads every signed-in request makes before its view runs: the session and its user.

Same rows, same checks as Django's database sessions and ``ModelBackend``; only the query is
written once here instead of being built by the ORM on each request: building and compiling a
queryset costs many times the query itself, on every request of every member. Nothing is cached, so signing out, a new password or a deactivated
account take effect on the very next request, in every worker.
"""

from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend
from django.contrib.sessions.backends import db
from django.core.exceptions import ValidationError
from django.db import connections, models, router
from django.utils import timezone


def row_fetch(model: type[models.Model], where: str, params: list) -> models.Model | None:
    """The one row of ``model`` matching ``where`` (SQL with ``%s`` placeholders on column names), or None."""
    using = router.db_for_read(model)
    connection = connections[using]
    fields = model._meta.concrete_fields
    columns = ", ".join(connection.ops.quote_name(field.column) for field in fields)
    table = connection.ops.quote_name(model._meta.db_table)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {columns} FROM {table} WHERE {where} LIMIT 1", params)
        row = cursor.fetchone()
    if row is None:
        return None
    converters = connection.ops.get_db_converters  # values as the ORM would give them (dates, booleans)
    values = []
    for field, value in zip(fields, row):
        expression = field.get_col(model._meta.db_table)
        for converter in [*converters(expression), *expression.get_db_converters(connection)]:
            value = converter(value, expression, connection)
        values.append(value)
    return model.from_db(using, [field.attname for field in fields], values)


class SessionStore(db.SessionStore):
    """Django's database sessions (``SESSION_ENGINE = "core.db.auth"``), read with one prepared query."""

    def _get_session_from_db(self):
        connection = connections[router.db_for_read(self.model)]
        now = connection.ops.adapt_datetimefield_value(timezone.now())
        session = row_fetch(self.model, "session_key = %s AND expire_date > %s", [self.session_key, now])
        if session is None:
            self._session_key = None
        return session


class UserBackend(ModelBackend):
    """``ModelBackend`` whose per-request user lookup skips the queryset machinery; the same checks apply."""

    def get_user(self, user_id):
        User = get_user_model()
        try:
            pk = User._meta.pk.to_python(user_id)
        except ValidationError:
            return None
        quote = connections[router.db_for_read(User)].ops.quote_name
        user = row_fetch(User, f"{quote(User._meta.pk.column)} = %s", [pk])
        return user if user is not None and self.user_can_authenticate(user) else None
