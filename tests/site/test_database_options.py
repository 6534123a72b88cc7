"""PostgreSQL statements are bound and prepared on the server, and a pooler's deployment can turn that off."""

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.db import connection

from annotation.models import Item, Project
from causalqa_site.settings import database_from_url


def test_postgresql_binds_on_the_server_and_prepares_a_statement_run_five_times():
    options = database_from_url("postgres://causalqa@db:5432/causalqa")["OPTIONS"]
    assert options == {"server_side_binding": True, "prepare_threshold": 5}


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("prepare_threshold=none", {"server_side_binding": True, "prepare_threshold": None}),
        ("prepare_threshold=0", {"server_side_binding": True, "prepare_threshold": 0}),
        ("server_side_binding=false", {"server_side_binding": False, "prepare_threshold": 5}),
        (
            "sslmode=require&server_side_binding=off&prepare_threshold=None",
            {"sslmode": "require", "server_side_binding": False, "prepare_threshold": None},
        ),
    ],
)
def test_the_url_can_turn_preparing_off_for_a_pooler(query, expected):
    assert database_from_url(f"postgres://causalqa@db:5432/causalqa?{query}")["OPTIONS"] == expected


@pytest.mark.parametrize(
    ("query", "named"),
    [("prepare_threshold=often", "prepare_threshold='often'"), ("server_side_binding=maybe", "'maybe'")],
)
def test_a_value_that_is_not_understood_is_named(query, named):
    with pytest.raises(ImproperlyConfigured, match=named):
        database_from_url(f"postgres://causalqa@db:5432/causalqa?{query}")


def test_sqlite_keeps_its_own_options():
    options = database_from_url("sqlite:///var/db.sqlite3")["OPTIONS"]
    assert "prepare_threshold" not in options and "server_side_binding" not in options


def postgresql_only():
    if connection.vendor != "postgresql":
        pytest.skip("binding on the server is PostgreSQL's")


@pytest.mark.django_db
def test_a_statement_run_again_and_again_is_planned_once_on_postgresql():
    postgresql_only()
    project = Project.objects.create(name="Prepared", slug="prepared", overlap=2)
    shape = '%"annotation_project"."overlap" = $%'  # no other test asks for a project by slug and overlap

    def prepared() -> list[str]:
        with connection.cursor() as cursor:
            cursor.execute("SELECT statement FROM pg_prepared_statements WHERE statement LIKE %s", [shape])
            return [statement for (statement,) in cursor.fetchall()]

    assert prepared() == []
    for _ in range(6):
        assert (
            Project.objects.filter(slug="prepared", overlap=2).values_list("pk", flat=True).first()
            == project.pk
        )
    (statement,) = prepared()
    # the values are sent apart from the statement: its text holds none of them
    assert "'prepared'" not in statement and "$1" in statement


@pytest.mark.django_db
def test_more_values_than_the_protocol_carries_are_bound_in_the_client():
    """A filter or a cascade over a 100,000-item project sends more than 65,535 values in one statement."""
    postgresql_only()
    from core.db.postgresql.base import ServerBindingCursor

    project = Project.objects.create(name="Long lists", slug="long-lists")
    items = Item.objects.bulk_create(
        Item(project=project, question=f"Q{n}?", text_key=f"q{n}") for n in range(3)
    )
    ids = [item.pk for item in items] + list(range(10**9, 10**9 + 70_000))
    assert Item.objects.filter(pk__in=ids).count() == 3
    chosen = Item.objects.filter(pk__in=ids, question__in=["Q0?", "Q2?"]).order_by("pk")
    assert list(chosen.values_list("question", flat=True)) == ["Q0?", "Q2?"]
    assert Item.objects.filter(pk__in=ids).delete()[0] >= 3
    assert not Item.objects.filter(project=project).exists()
    # and the site's cursor binds every shorter statement on the server
    assert isinstance(connection.connection.cursor(), ServerBindingCursor)


def test_the_url_s_parts_and_its_other_options_reach_the_connection():
    config = database_from_url("postgresql://causalqa:p%40ss@db.internal:6432/studio?sslmode=require")
    assert (config["ENGINE"], config["NAME"], config["USER"], config["PASSWORD"]) == (
        "core.db.postgresql",
        "studio",
        "causalqa",
        "p@ss",
    )
    assert (config["HOST"], config["PORT"]) == ("db.internal", "6432")
    assert config["OPTIONS"]["sslmode"] == "require"
    assert config["TEST"]["NAME"] == "test_studio"


def test_a_relative_sqlite_path_is_the_checkout_s_and_an_absolute_one_stays():
    from django.conf import settings

    assert database_from_url("sqlite:///var/db.sqlite3")["NAME"] == str(settings.BASE_DIR / "var/db.sqlite3")
    assert database_from_url("sqlite:////srv/studio.sqlite3")["NAME"] == "/srv/studio.sqlite3"


def test_an_unknown_scheme_is_named():
    with pytest.raises(ValueError, match="'mysql'"):
        database_from_url("mysql://db/studio")
