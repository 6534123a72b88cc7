"""Every REST API endpoint refuses what it does not know, through one base class: an unknown query parameter
(any method) or body field (any method that writes) is a 400 naming it. The endpoints are read from the URLconf,
so a new one is tested without being listed here."""

import json

import pytest
from drf_spectacular.generators import EndpointEnumerator

from core.api.strict import StrictApiMixin
from tests.factories import ItemFactory, api_token_key

pytestmark = pytest.mark.django_db

# Values for the path arguments; the unknown input is refused before any object is looked up.
PATH_ARGUMENTS = {
    "{slug}": "causal-qa",
    "{item_id}": "1",
    "{view_id}": "1",
    "{assignment_id}": "1",
    "{number}": "1",
    "{job_id}": "1",
    "{run_id}": "1",
    "{bulk_run_id}": "1",
    "{version}": "v1",
    "{split}": "test",
    "{path}": "meter/test.jsonl",
    "{harness}": "lm-eval",
}


def api_endpoints() -> list[tuple[str, str, type]]:
    endpoints = []
    for path, _regex, method, callback in EndpointEnumerator().get_api_endpoints():
        if path.startswith("/api/v1/"):
            for name, value in PATH_ARGUMENTS.items():
                path = path.replace(name, value)
            assert "{" not in path, f"give a value for the path argument of {path}"
            endpoints.append((method, path, callback.cls))
    return endpoints


ENDPOINTS = api_endpoints()
WRITES = [
    (method, path, view) for method, path, view in ENDPOINTS if method in ("POST", "PUT", "PATCH", "DELETE")
]


def body(response) -> dict:
    """The error's JSON (one JSON line where the endpoint speaks JSON lines)."""
    return json.loads(response.content)


def test_the_api_has_the_endpoints_the_readme_lists():
    paths = {path for _method, path, _view in ENDPOINTS}
    assert len(ENDPOINTS) >= 23 and len(WRITES) >= 6
    assert "/api/v1/projects/causal-qa/items/1/judgments/" in paths


@pytest.mark.parametrize(("method", "path", "view"), ENDPOINTS)
def test_every_api_view_is_strict(method, path, view):
    assert issubclass(view, StrictApiMixin), f"{view.__name__} ({method} {path}) must use StrictApiMixin"


@pytest.mark.parametrize(("method", "path", "view"), ENDPOINTS)
def test_an_unknown_query_parameter_is_refused_naming_it(client, project, owner, method, path, view):
    response = client.generic(
        method,
        f"{path}?colour=red",
        content_type="application/json",
        headers={"Authorization": f"Token {api_token_key(owner)}"},
    )
    assert response.status_code == 400, (method, path, response.status_code)
    assert "Unknown query parameter(s): colour" in body(response)["detail"]


@pytest.mark.parametrize(("method", "path", "view"), WRITES)
def test_an_unknown_body_field_is_refused_naming_it(client, project, owner, method, path, view):
    response = client.generic(
        method,
        path,
        '{"colour": "red"}',
        content_type="application/json",
        headers={"Authorization": f"Token {api_token_key(owner)}"},
    )
    assert response.status_code == 400, (method, path, response.status_code)
    assert "Unknown field" in response.json()["colour"][0]


@pytest.mark.parametrize(("method", "path", "view"), WRITES)
def test_a_form_body_with_a_field_is_refused_too(client, project, owner, method, path, view):
    """A body is JSON; endpoints that take none still refuse a form that holds something."""
    response = client.generic(
        method,
        path,
        "colour=red",
        content_type="application/x-www-form-urlencoded",
        headers={"Authorization": f"Token {api_token_key(owner)}"},
    )
    assert response.status_code in (400, 415), (method, path, response.status_code)
    if response.status_code == 400:
        assert "colour" in response.json()


def test_a_method_an_endpoint_does_not_answer_is_a_405_whatever_it_carries(client, project, owner):
    response = client.put(
        "/api/v1/projects/causal-qa/releases/?colour=red",
        '{"colour": "red"}',
        content_type="application/json",
        headers={"Authorization": f"Token {api_token_key(owner)}"},
    )
    assert response.status_code == 405 and "GET" in response["Allow"]


def test_known_parameters_pass(client, project, owner):
    item = ItemFactory(project=project, metadata={"task": "AJ"})
    headers = {"Authorization": f"Token {api_token_key(owner)}"}
    for path in (
        "/api/v1/projects/causal-qa/items/?status=approved&page_size=5",
        f"/api/v1/projects/causal-qa/items/{item.pk}/judgments/?page_size=5",
        "/api/v1/prompt-templates/?kind=answer&language=pt-BR",
        # a metadata key no judged item has yet is a breakdown with one group, as the schema's pattern allows
        "/api/v1/projects/causal-qa/agreement/?by=meta:task&level=ordinal",
    ):
        assert client.get(path, headers=headers).status_code == 200, path


@pytest.mark.parametrize("value", ["", "0", "-3", "abc", "null"])
def test_a_page_size_that_is_no_whole_number_from_1_is_refused(client, project, owner, value):
    item = ItemFactory(project=project)
    response = client.get(
        f"/api/v1/projects/causal-qa/items/{item.pk}/judgments/?page_size={value}",
        headers={"Authorization": f"Token {api_token_key(owner)}"},
    )
    assert response.status_code == 400, value
    assert "page_size" in response.json()


@pytest.mark.parametrize("query", ["topic=", "status=", "format=", "level="])
def test_an_empty_value_is_refused_not_read_as_absent(client, project, owner, query):
    path = (
        "/api/v1/projects/causal-qa/agreement/" if query == "level=" else "/api/v1/projects/causal-qa/items/"
    )
    response = client.get(f"{path}?{query}", headers={"Authorization": f"Token {api_token_key(owner)}"})
    assert response.status_code == 400, query
