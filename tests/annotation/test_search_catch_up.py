"""Search after an import: the import writes its items without their text vectors (PostgreSQL), search finds them
all the same by reading them directly, the background catch-up fills the vectors, and then the index finds each
of them once. On SQLite search reads the text with LIKE and nothing waits."""

import string

import pytest
from django.db import connection
from django.http import QueryDict
from django.urls import reverse

from annotation.importing import questions_import
from annotation.item_browser import ItemQuery, items_matching
from annotation.models import Item, Project
from annotation.search import search_backlog, search_backlogs_resume, search_catch_up
from tests.annotation.test_import_questions import csv_bytes
from tests.factories import ItemFactory

pytestmark = pytest.mark.django_db

POSTGRES = connection.vendor == "postgresql"


def token(n: int) -> str:
    """A made-up word of its own for the ``n``-th question (letters only: the stemmer keeps it whole)."""
    letters = ""
    for _ in range(3):
        n, rest = divmod(n, 26)
        letters += string.ascii_lowercase[rest]
    return f"zorb{letters}"


def imported(project, count: int, start: int = 0):
    rows = [
        [f"Por que o termo {token(n)} aumenta agora?", "associational", "true", f"t{n}", "Educação"]
        for n in range(start, start + count)
    ]
    batch = questions_import(project=project, data=csv_bytes(rows), filename="terms.csv")
    assert batch.funnel["imported"] == count
    return batch


def found(project, word: str) -> list[int]:
    return list(
        items_matching(project, ItemQuery.from_params(QueryDict(f"q={word}"))).values_list("pk", flat=True)
    )


def search_finds_each_once(project, numbers) -> None:
    by_question = {
        question: pk for pk, question in Item.objects.filter(project=project).values_list("pk", "question")
    }
    for n in numbers:
        expected = by_question[f"Por que o termo {token(n)} aumenta agora?"]
        assert found(project, token(n)) == [expected], token(n)


def vectors_missing(project) -> int:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM annotation_item WHERE project_id = %s AND search_vector IS NULL",
            [project.pk],
        )
        return cursor.fetchone()[0]


def test_search_finds_every_imported_item_while_indexing_and_once_it_is_done(
    project, django_capture_on_commit_callbacks, monkeypatch
):
    sent = []
    monkeypatch.setattr("annotation.search.search_enqueue", sent.append)
    with django_capture_on_commit_callbacks(execute=True):
        imported(project, 60)
    if POSTGRES:
        # The import left the vectors to the background: none written, the project marked, the catch-up queued.
        assert vectors_missing(project) == 60
        assert search_backlog(project) == 60
        assert sent == [project.pk]
    else:
        assert search_backlog(project) == 0
    search_finds_each_once(project, range(60))  # during: the items not indexed yet are read directly

    assert search_catch_up(project.pk, rows=25) == (
        60 if POSTGRES else 0
    )  # three transactions of the catch-up
    project.refresh_from_db()
    assert project.search_pending_from is None
    assert search_backlog(project) == 0
    if POSTGRES:
        assert vectors_missing(project) == 0
    search_finds_each_once(project, range(60))  # after: through the index


@pytest.mark.skipif(not POSTGRES, reason="SQLite keeps no text vectors")
def test_the_index_alone_answers_once_search_has_caught_up(project):
    imported(project, 5)
    search_catch_up(project.pk)
    query = items_matching(project, ItemQuery.from_params(QueryDict(f"q={token(3)}"))).query
    sql, params = query.sql_with_params()
    assert "IS NULL" not in sql and "search_vector" in sql  # the vectors alone, no reading of the text
    assert found(project, token(3)) == [Item.objects.get(project=project, external_id="t3").pk]


@pytest.mark.skipif(not POSTGRES, reason="SQLite keeps no text vectors")
def test_a_second_import_during_the_catch_up_keeps_its_items_found(project):
    imported(project, 10)
    imported(project, 10, start=10)
    # The mark covers both imports: the first id of the earlier one.
    assert search_backlog(project) == 20
    search_catch_up(project.pk)
    imported(project, 10, start=20)
    assert search_backlog(project) == 10
    search_finds_each_once(project, range(30))
    search_catch_up(project.pk)
    assert search_backlog(project) == 0
    search_finds_each_once(project, range(30))


@pytest.mark.skipif(not POSTGRES, reason="SQLite keeps no text vectors")
def test_an_edited_question_is_found_by_its_new_words_and_not_its_old(project):
    imported(project, 3)
    search_catch_up(project.pk)
    item = Item.objects.get(project=project, external_id="t1")
    item.question = "Por que o termo zorbnovo aumenta agora?"
    item.save()
    assert found(project, "zorbnovo") == [item.pk]
    assert found(project, token(1)) == []
    # Before the catch-up too: the edit computes the vector itself.
    imported(project, 1, start=5)
    fresh = Item.objects.get(project=project, external_id="t5")
    Item.objects.filter(pk=fresh.pk).update(context="enchentes no verão")
    assert found(project, "enchente") == [fresh.pk]


def test_items_made_one_at_a_time_are_found_at_once(project):
    item = ItemFactory(project=project, question="A chuva forte causa enchentes em São Paulo?")
    assert search_backlog(project) == 0
    assert found(project, "chuva") == [item.pk]


@pytest.mark.skipif(not POSTGRES, reason="SQLite keeps no text vectors")
def test_the_periodic_sweep_sends_an_unfinished_catch_up_again(project, monkeypatch):
    sent = []
    monkeypatch.setattr("annotation.search.search_enqueue", sent.append)
    imported(project, 3)
    assert search_backlogs_resume() == [project.pk]
    assert sent == [project.pk]
    search_catch_up(project.pk)
    assert search_backlogs_resume() == []


def test_the_items_page_says_how_many_items_are_being_indexed(project, curator, client_for):
    imported(project, 4)
    page = client_for(curator).get(reverse("annotation:items", args=[project.slug]))
    text = page.content.decode()
    if POSTGRES:
        assert "Indexing 4 items for search" in text
        search_catch_up(project.pk)
        page = client_for(curator).get(reverse("annotation:items", args=[project.slug]))
    assert "search-backlog" not in page.content.decode()
    assert Project.objects.get(pk=project.pk).search_pending_from is None
