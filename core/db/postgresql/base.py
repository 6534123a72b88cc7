"""Django's PostgreSQL backend, with parameters bound on the server and statements prepared there.

The settings (``causalqa_site.settings.postgres_options``) ask psycopg to send parameters apart from the SQL
and to prepare a statement once it has run 5 times on a connection, so PostgreSQL stops parsing and planning
the annotator loop's statements on every request. The protocol carries at most 65,535 parameters in one
statement, where Django's default, binding in the client, had no limit, and Django sends long lists as they
come (``pk__in`` over a project's 100,000 items, the rows a cascade deletes). Such a statement is bound in the
client, as before; every other one on the server.
"""

from django.db.backends.postgresql import base
from psycopg import ClientCursor

# The protocol's count of parameters is a 16-bit number.
MAX_SERVER_PARAMETERS = 65_535


class ServerBindingCursor(base.ServerBindingCursor):
    def execute(self, query, params=None, *, prepare=None, binary=None):
        if params is not None and len(params) > MAX_SERVER_PARAMETERS:
            # The values written into the SQL as Django's client-side cursor writes them; never prepared (a
            # statement of literals is not run again).
            query, params, prepare = ClientCursor(self.connection).mogrify(query, params), None, False
        return super().execute(query, params, prepare=prepare, binary=binary)


class DatabaseWrapper(base.DatabaseWrapper):
    def get_connection_params(self):
        params = super().get_connection_params()
        if params.get("cursor_factory") is base.ServerBindingCursor:
            params["cursor_factory"] = ServerBindingCursor
        return params
