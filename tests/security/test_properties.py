"""Whatever a member sends, the answer is a 4xx or a clear message, never a server error: the items page's query
parameters (dates, numbers, text with NUL characters, cursors of any shape) and the import readers over random
bytes and random values."""

import base64
import io
import json
import zipfile

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from annotation.importing.errors import ImportFileError
from annotation.importing.preview import import_file_preview
from annotation.importing.tables import UNREADABLE, open_table
from annotation.item_browser import SORTS, BadQuery, ItemQuery, items_matching, items_page
from tests.factories import ItemFactory

pytestmark = pytest.mark.django_db

PROPERTY = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
NASTY_TEXT = st.one_of(
    st.text(max_size=30),
    st.sampled_from(
        [
            "2024-02-30",
            "2024-13-01",
            "0000-01-01",
            "9999-12-31T23:59:59",
            "NaN",
            "inf",
            "-1e999",
            "1e999",
            "99999999999999999999",
            "１２",
            "²",
            "\x00",
            "a\x00b",
            "-",
            "2024-01-01T25:00",
            "0",
            "-0",
        ]
    ),
)
PARAMS = list(ItemQuery.FILTER_PARAMS) + ["cursor"]


def cursor_of(parts) -> str:
    return base64.urlsafe_b64encode(json.dumps(parts).encode()).decode().rstrip("=")


JSON_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(),
    st.text(max_size=12),
)
CURSORS = st.one_of(
    NASTY_TEXT,
    st.builds(
        lambda sort, value, last: cursor_of([sort, value, last]),
        st.sampled_from(list(SORTS) + ["x"]),
        JSON_SCALARS,
        JSON_SCALARS,
    ),
)


@PROPERTY
@given(
    params=st.dictionaries(st.sampled_from(PARAMS), NASTY_TEXT, max_size=4),
    cursor=CURSORS,
    sort=st.sampled_from(list(SORTS) + ["-" + key for key in SORTS]),
)
def test_the_items_page_answers_any_query_with_a_page_or_a_400(
    project, curator, client_for, params, cursor, sort
):
    if not project.items.exists():
        ItemFactory.create_batch(3, project=project)
    response = client_for(curator).get(
        f"/p/{project.slug}/items/", {**params, "sort": params.get("sort", sort), "cursor": cursor}
    )
    assert response.status_code in (200, 400), (params, cursor, response.status_code)


@PROPERTY
@given(cursor=CURSORS, sort=st.sampled_from(list(SORTS)))
def test_a_cursor_of_any_shape_is_read_or_refused_by_name(project, cursor, sort):
    query = ItemQuery(sort=sort)
    try:
        items_page(items_matching(project, query), query, cursor=cursor)
    except BadQuery as bad:
        assert bad.field == "cursor"


def _read_everything(data: bytes, name: str) -> None:
    try:
        table = open_table(data, name)
        for _line, _record in table.rows:
            pass
    except ImportFileError as refused:
        assert refused.errors and all(error.reason for error in refused.errors)
    except UNREADABLE:
        pass  # the doors turn these into "the file could not be read to its end"


@PROPERTY
@given(
    data=st.binary(max_size=2000),
    name=st.sampled_from(["f.csv", "f.jsonl", "f.xlsx", "f.parquet", "f.zip", "f"]),
)
def test_the_readers_refuse_random_bytes_with_a_reason(data, name):
    _read_everything(data, name)


@PROPERTY
@given(
    values=st.lists(
        st.dictionaries(
            st.sampled_from(["question", "x", "y"]),
            st.one_of(JSON_SCALARS, st.lists(JSON_SCALARS, max_size=3)),
            max_size=3,
        ),
        max_size=5,
    ),
)
def test_jsonl_and_a_zip_of_it_with_random_values_read_or_refuse_cleanly(values):
    text = "\n".join(json.dumps(value) for value in values).encode()
    _read_everything(text, "f.jsonl")
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("train.jsonl", text)
    _read_everything(buffer.getvalue(), "f.zip")


@PROPERTY
@given(data=st.binary(max_size=1500), name=st.sampled_from(["f.csv", "f.xlsx", "f.parquet", "f.zip"]))
def test_the_import_preview_answers_random_bytes_with_rows_or_a_problem(project, data, name):
    preview = import_file_preview(project=project, data=data, filename=name)
    assert "problem" in preview or "columns" in preview


@pytest.mark.parametrize(
    "params",
    [
        {"changed_after": "2024-02-30"},
        {"changed_before": "2024-13-45T10:00"},
        {"changed_after": "9999-12-31T23:59:59"},  # the year 10000 in UTC
        {"changed_before": "0001-01-01T00:00:00+05:00"},
        {"disagreement_min": "NaN"},
        {"disagreement_max": "1e999"},
        {"round": "99999999999999999999"},
        {"q": "chuva\x00"},
        {"metadata_key": "a\x00"},
        {"answered_by_user": "\x00"},
        {"sort": "round", "cursor": cursor_of(["round", "abc", 1])},
        {"sort": "id", "cursor": cursor_of(["id", 1, "x"])},
        {"sort": "updated_at", "cursor": cursor_of(["updated_at", "2024-02-30T00:00:00", 1])},
        {"sort": "disagreement", "cursor": cursor_of(["disagreement", True, 1])},
        {"sort": "id", "cursor": cursor_of(["id", 2**80, 1])},
    ],
)
def test_each_bad_parameter_found_by_the_audit_is_a_400_naming_it(project, curator, client_for, params):
    ItemFactory(project=project)
    response = client_for(curator).get(f"/p/{project.slug}/items/", params)
    assert response.status_code == 400, params
    assert response.context["error"]["field"] in params, response.context["error"]


# Every other page that reads its query string, with the parameters it reads (its form's fields included).
PAGES_WITH_QUERIES = {
    "annotation:review_queue": ["page", "preview", "votes", "min_mean_rating", "class_agreed"],
    "annotation:item_review": ["round"],
    "annotation:items_export": ["scope", "item", "format", "status", "q", "changed_after", "round", "sort"],
    "topics:balance": [
        "propose",
        "topic",
        "endpoint",
        "answer_endpoint",
        "answer_variant",
        "batch_size",
        "count_associational",
        "count_counterfactual",
    ],
    "evaluation:run_list": ["release"],
    "evaluation:run_compare": [
        "run",
        "level_key",
        "type_key",
        "task_key",
        "variant_key",
        "differences",
        "table",
    ],
    "evaluation:run_detail": ["level_key", "task_key", "differences"],
    "evaluation:agreement": ["round", "by", "level", "include_own"],
    "evaluation:agreement_cells": ["criterion"],
    "evaluation:release_download": ["format"],
}


@pytest.fixture
def reachable(project, curator):
    """What the pages show: items, a topic, a release and a finished run."""
    from evaluation.models import EvalRun
    from tests.evaluation.runs import open_items, release_of
    from topics.models import Topic

    items = open_items(project, 6)
    Topic.objects.create(project=project, label="chuva")
    release = release_of(project)
    run = EvalRun.objects.create(
        project=project, release=release, answer_format=project.answer_format, status=EvalRun.Status.SUCCEEDED
    )
    return {"item": items[0], "release": release, "run": run}


def page_path(name: str, project, reachable) -> str:
    from django.urls import reverse

    args = {
        "annotation:item_review": [reachable["item"].pk],
        "evaluation:run_detail": [reachable["run"].pk],
        "evaluation:release_download": [reachable["release"].version],
    }.get(name, [])
    return reverse(name, args=[project.slug, *args])


@pytest.mark.parametrize("name", sorted(PAGES_WITH_QUERIES))
def test_every_page_that_reads_its_query_string_answers_any_query_without_a_server_error(
    name, project, curator, client_for, reachable
):
    path = page_path(name, project, reachable)
    client = client_for(curator)
    values = st.one_of(NASTY_TEXT, st.lists(NASTY_TEXT, min_size=1, max_size=3))
    known = {"run": str(reachable["run"].pk), "release": str(reachable["release"].version)}

    @PROPERTY
    @given(params=st.dictionaries(st.sampled_from(PAGES_WITH_QUERIES[name]), values, max_size=4))
    def answers(params):
        # A real run or release beside the random values, so the values reach the code that reads them.
        query = {**{key: value for key, value in known.items() if key in PAGES_WITH_QUERIES[name]}, **params}
        response = client.get(path, query)
        assert response.status_code < 500, (name, query, response.status_code)

    answers()


@pytest.mark.parametrize(
    ("name", "params"),
    [
        ("evaluation:run_list", {"release": "²"}),
        ("evaluation:run_list", {"release": "99999999999999999999999"}),
    ],
)
def test_each_bad_parameter_found_by_the_audit_of_the_other_pages_is_not_a_server_error(
    name, params, project, curator, client_for, reachable
):
    response = client_for(curator).get(page_path(name, project, reachable), params)
    assert response.status_code < 500, params
