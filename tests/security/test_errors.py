"""What a member can send never ends in a server error: each of these odd requests is refused with a 4xx and a
message (or, on a page, sent back with the message), nothing half-written."""

import re
from urllib.parse import urlsplit

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.http import QueryDict
from django.urls import reverse

from annotation.models import Membership, Project
from designs.explica.design import DEFAULT_CONNECTIVES
from tests.factories import ItemFactory, api_token_key

pytestmark = pytest.mark.django_db

DEEP = "[" * 100_000 + "]" * 100_000


@pytest.fixture
def explica(owner, curator):
    from tests.designs.test_explica import explica_project

    project = explica_project(slug="explica-erros")
    Membership.objects.create(project=project, user=curator, role=Membership.Role.CURATOR)
    return project


def messages_of(response) -> list[str]:
    return [str(message) for message in response.wsgi_request._messages]


def test_a_non_numeric_topic_id_is_a_400_not_a_500(project, client_for, curator):
    response = client_for(curator).post(
        reverse("topics:balance_targets", args=[project.slug]), {"topic": "abc"}
    )
    assert response.status_code in (400, 404)


def test_a_malformed_api_cursor_is_a_400_naming_the_cursor(project, client, curator):
    headers = {"Authorization": f"Token {api_token_key(curator)}"}
    malformed = [
        "%%%",
        "abc",  # decoded as nothing: it was page 1
        "cD1hYmM=",  # p=abc, where the ordering is by id
        "cD05OTk5OTk5OTk5OTk5OTk5OTk5OTk5OTk5",  # p=huge
        "n0.abc",  # a position of the wrong type
        "n0.9999999999999999999999",  # past the database's integers
        "n-1",
        "x0",
        "n0.",
        "n0.1\x00",
        "",
    ]
    for cursor in malformed:
        response = client.get(f"/api/v1/projects/{project.slug}/items/", {"cursor": cursor}, headers=headers)
        assert response.status_code == 400, cursor
        assert response["Content-Type"].startswith("application/json"), cursor
        assert "cursor" in response.json(), (cursor, response.json())


def test_a_project_list_cursor_is_a_slug_and_an_item_list_cursor_a_whole_number(project, client, curator):
    headers = {"Authorization": f"Token {api_token_key(curator)}"}
    assert client.get("/api/v1/projects/", {"cursor": "n0.a-slug_1"}, headers=headers).status_code == 200
    assert client.get("/api/v1/projects/", {"cursor": "r0.a slug"}, headers=headers).status_code == 400
    items = f"/api/v1/projects/{project.slug}/items/"
    assert client.get(items, {"cursor": "r3.123"}, headers=headers).status_code == 200
    assert client.get(items, {"cursor": "n0.a-slug"}, headers=headers).status_code == 400


def test_the_schema_states_each_list_cursor_as_a_pattern_its_own_links_match(project, client, curator):
    ItemFactory.create_batch(3, project=project)
    headers = {"Authorization": f"Token {api_token_key(curator)}"}
    schema = client.get("/api/schema/?format=json", headers=headers).json()
    patterns = {}
    for path, operations in schema["paths"].items():
        for parameter in operations.get("get", {}).get("parameters", []):
            if parameter["name"] == "cursor":
                patterns[path] = parameter["schema"].get("pattern")
    assert patterns, "no list declares a cursor"
    assert all(patterns.values()), [path for path, pattern in patterns.items() if not pattern]
    pattern = patterns["/api/v1/projects/{slug}/items/"]
    page = client.get(f"/api/v1/projects/{project.slug}/items/?page_size=1", headers=headers).json()
    following = client.get(page["next"], headers=headers).json()
    for link in (page["next"], following["previous"]):
        cursor = QueryDict(urlsplit(link).query)["cursor"]
        assert re.fullmatch(pattern[1:-1], cursor), cursor
    assert following["results"][0]["id"] > page["results"][0]["id"]
    assert client.get(following["previous"], headers=headers).json()["results"] == page["results"]


def test_every_api_4xx_is_json_even_for_a_body_too_large(project, client, curator, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1024
    headers = {"Authorization": f"Token {api_token_key(curator)}"}
    response = client.post(
        f"/api/v1/projects/{project.slug}/jobs/",
        data="{" + " " * 4096 + "}",
        content_type="application/json",
        headers=headers,
    )
    assert response.status_code == 400
    assert response["Content-Type"].startswith("application/json")
    assert response.json()["detail"] == "The request body is too large."


def test_a_huge_page_number_is_not_a_server_error(project, client_for, curator):
    response = client_for(curator).get(
        reverse("annotation:review_queue", args=[project.slug]), {"page": "9" * 30}
    )
    assert response.status_code == 200


@pytest.mark.parametrize("value", ["nan", "inf", "-inf"])
def test_nan_or_infinity_in_the_explica_settings_is_refused(explica, client_for, curator, value):
    response = client_for(curator).post(
        reverse("designs:explica_settings", args=[explica.slug]),
        {"connectives": "[]", "best_mean_above": value, "overall_mean_below": "2.5"},
    )
    assert response.status_code == 302
    assert any("not saved" in message for message in messages_of(response))
    explica.refresh_from_db()
    assert (
        "nan" not in str(explica.design_settings).lower()
        and "inf" not in str(explica.design_settings).lower()
    )


def test_deeply_nested_json_in_the_explica_pairs_upload_is_refused(explica, client_for, curator):
    from annotation.models import ImportBatch, ItemGroup
    from tests.designs.published_pages import upload_pairs_and_import

    batch, page = upload_pairs_and_import(client_for(curator), explica, "pares.jsonl", DEEP.encode())
    assert batch.status == ImportBatch.Status.FAILED
    assert "Nothing was imported" in page
    assert "internal error" not in page
    assert not ItemGroup.objects.filter(project=explica).exists()


def test_deeply_nested_connectives_are_refused(explica, client_for, curator):
    response = client_for(curator).post(
        reverse("designs:explica_settings", args=[explica.slug]),
        {"connectives": DEEP, "best_mean_above": "3", "overall_mean_below": "2.5"},
    )
    assert response.status_code == 302
    assert any("not saved" in message for message in messages_of(response))


def test_a_csv_field_over_the_csv_modules_limit_in_the_pairs_upload_is_refused(explica, client_for, curator):
    from annotation.models import ImportBatch, ItemGroup
    from tests.designs.published_pages import upload_pairs_and_import

    text = 'external_id,sentence_a,sentence_b\np1,"' + "a" * 200_000 + '",b\n'
    batch, page = upload_pairs_and_import(client_for(curator), explica, "pares.csv", text.encode())
    assert batch.status == ImportBatch.Status.FAILED
    assert "Nothing was imported" in page
    assert "internal error" not in page
    assert not ItemGroup.objects.filter(project=explica).exists()


def test_a_deeply_nested_json_body_to_the_releases_api_is_a_400(project, client, curator):
    response = client.post(
        f"/api/v1/projects/{project.slug}/releases/",
        DEEP,
        content_type="application/json",
        headers={"Authorization": f"Token {api_token_key(curator)}"},
    )
    assert response.status_code == 400
    assert "nested" in response.json()["detail"]


def test_the_explica_defaults_are_still_accepted(explica, client_for, curator):
    import json

    response = client_for(curator).post(
        reverse("designs:explica_settings", args=[explica.slug]),
        {"connectives": json.dumps(DEFAULT_CONNECTIVES), "best_mean_above": "3", "overall_mean_below": "2.5"},
    )
    assert any("saved" in message and "not" not in message for message in messages_of(response))


@pytest.mark.parametrize(
    "path",
    [
        "/api/v1/projects/causal-qa/jobs/?status=running",
        "/api/v1/projects/causal-qa/model-endpoints/?all=1",
        "/api/v1/prompt-templates/?kind=answer&versao=2",
        "/api/v1/projects/causal-qa/items/1/judgments/?annotator=3",
    ],
)
def test_unknown_query_parameters_are_refused_everywhere(project, client, curator, path):
    response = client.get(path, headers={"Authorization": f"Token {api_token_key(curator)}"})
    assert response.status_code == 400
    assert "Unknown query parameter" in response.json()["detail"]


def test_unknown_body_fields_are_refused_when_starting_a_job(project, client, curator):
    response = client.post(
        f"/api/v1/projects/{project.slug}/jobs/",
        {"kind": "answer", "prioridade": "alta"},
        content_type="application/json",
        headers={"Authorization": f"Token {api_token_key(curator)}"},
    )
    assert response.status_code == 400
    assert "prioridade" in response.json()


def test_selectors_raise_the_domain_not_found_and_each_door_answers_404(project, client, curator):
    """Selectors raise ``core.errors.NotFound`` (no HTTP in the domain); pages and the API map it to a
    404 in one place each, with the selector's message in the API's body."""
    from django.http import Http404

    from annotation.permissions import get_item_for_user, get_project_for_user
    from core.errors import NotFound
    from evaluation.selectors.releases import release_for_user
    from generation.selectors import job_for_project

    with pytest.raises(NotFound) as caught:
        get_project_for_user(curator, "no-such-project")
    assert not isinstance(caught.value, Http404)
    for lookup in (
        lambda: get_item_for_user(curator, project, 10**9),
        lambda: release_for_user(project, "v9"),
        lambda: job_for_project(project, 10**9),
    ):
        with pytest.raises(NotFound):
            lookup()

    client.force_login(curator)
    assert client.get(reverse("annotation:item_review", args=[project.slug, 10**9])).status_code == 404
    assert client.get(reverse("evaluation:release_detail", args=[project.slug, 9])).status_code == 404
    headers = {"Authorization": f"Token {api_token_key(curator)}"}
    response = client.get(f"/api/v1/projects/{project.slug}/releases/v9/", headers=headers)
    assert response.status_code == 404 and "has no release v9" in response.json()["detail"]
