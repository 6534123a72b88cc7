"""Full-text search: PostgreSQL's, with Portuguese stemming, where it is; every word as a substring elsewhere."""

from django.db import connection, connections
from django.db.models import BooleanField, Q
from django.db.models.expressions import RawSQL

MAX_WORDS = 10  # words matched one by one where the database has no full-text search


def text_search(text: str, *, document: str, fields: tuple[str, ...], config: str = "portuguese"):
    """A condition: the rows whose ``document`` (SQL building a ``tsvector``, answered by an index on the same
    expression) matches ``text`` on PostgreSQL; elsewhere, rows where every word of ``text`` is in one of
    ``fields`` (case-insensitive)."""
    if connection.vendor == "postgresql":
        return RawSQL(
            f"{document} @@ websearch_to_tsquery('{config}'::regconfig, %s)",
            [text],
            output_field=BooleanField(),
        )
    condition = Q()
    for word in text.split()[:MAX_WORDS]:
        either = Q()
        for field in fields:
            either |= Q(**{f"{field}__icontains": word})
        condition &= either
    return condition


def stores_text_vectors(using: str = "default") -> bool:
    """Whether the database keeps full-text vectors and answers a text query through them (PostgreSQL); elsewhere
    search reads the text itself."""
    return connections[using].vendor == "postgresql"
