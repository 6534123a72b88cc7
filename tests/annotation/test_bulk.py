"""Bulk inserts (annotation.bulk): on SQLite a large one leaves statistics for the query planner."""

import pytest
from django.db import connection
from django.utils import timezone

from annotation import bulk
from annotation.bulk import fast_insert
from annotation.models import Item
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
