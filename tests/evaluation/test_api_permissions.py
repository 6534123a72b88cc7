"""Every API endpoint answers each role as the pages do, over real HTTP with token authentication."""

import httpx
import pytest

from evaluation.services import release_cut
from tests.evaluation.helpers import approved_items, judge
from tests.factories import api_token_key

# Expected status per endpoint for each role; "anonymous" sends no token.
ENDPOINTS = {
    "project list": ("GET", "/api/v1/projects/"),
    "project": ("GET", "/api/v1/projects/causal-qa/"),
    "items": ("GET", "/api/v1/projects/causal-qa/items/"),
    "releases": ("GET", "/api/v1/projects/causal-qa/releases/"),
    "cut a release": ("POST", "/api/v1/projects/causal-qa/releases/"),
    "release": ("GET", "/api/v1/projects/causal-qa/releases/v1/"),
    "split": ("GET", "/api/v1/projects/causal-qa/releases/v1/train/"),
    "split as jsonl": ("GET", "/api/v1/projects/causal-qa/releases/v1/test/?format=jsonl"),
    "agreement": ("GET", "/api/v1/projects/causal-qa/agreement/"),
    "runs": ("GET", "/api/v1/projects/causal-qa/runs/"),
    "start a run": ("POST", "/api/v1/projects/causal-qa/runs/"),
}
# A POST that passes the permission check is sent with an unknown field, so it stops at validation (400)
# without queuing a build; tests/evaluation/test_release_worker.py cuts releases through the API for real.
EXPECTED = {
    "anonymous": {name: 401 for name in ENDPOINTS},
    "outsider": {**{name: 404 for name in ENDPOINTS}, "project list": 200},
    "annotator": {
        **{name: 200 for name in ENDPOINTS},
        "cut a release": 403,
        "agreement": 403,
        "start a run": 403,
    },
    "curator": {**{name: 200 for name in ENDPOINTS}, "cut a release": 400, "start a run": 400},
    "owner": {**{name: 200 for name in ENDPOINTS}, "cut a release": 400, "start a run": 400},
}


@pytest.fixture
def released(transactional_db, project, annotators):
    items = approved_items(project, {"associational": 6, "counterfactual": 4})
    for item in items[:5]:
        for annotator in annotators:
            judge(item, annotator)
    release_cut(project=project)
    return project


def call(live_server, user, method, path, **kwargs):
    headers = {"Authorization": f"Token {api_token_key(user)}"} if user else {}
    return httpx.request(method, live_server.url + path, headers=headers, timeout=30, **kwargs)


@pytest.mark.parametrize("who", list(EXPECTED))
def test_each_endpoint_answers_the_role_as_expected(request, live_server, released, who):
    user = None if who == "anonymous" else request.getfixturevalue(who)
    answers = {}
    for name, (method, path) in ENDPOINTS.items():
        response = call(
            live_server, user, method, path, json={"seed": 1, "shard": 2} if method == "POST" else None
        )
        answers[name] = response.status_code
        if response.status_code >= 400:  # JSON, or one JSON line when JSON lines were asked for
            assert response.headers["content-type"].split(";")[0] in (
                "application/json",
                "application/x-ndjson",
            ), name
            assert response.json()["detail" if response.status_code != 400 else "shard"], name
    assert answers == EXPECTED[who]


def test_annotators_never_see_judgments_through_the_items_endpoint(live_server, released, annotator, curator):
    as_annotator = call(live_server, annotator, "GET", "/api/v1/projects/causal-qa/items/").json()["results"]
    as_curator = call(live_server, curator, "GET", "/api/v1/projects/causal-qa/items/").json()["results"]
    assert as_annotator and all("judgments" not in item for item in as_annotator)
    assert sum(len(item["judgments"]) for item in as_curator) == 15


def test_items_filter_and_page_with_a_cursor(live_server, released, curator):
    path = "/api/v1/projects/causal-qa/items/?causal_class=counterfactual&status=approved&page_size=3"
    first = call(live_server, curator, "GET", path).json()
    assert [item["causal_class"] for item in first["results"]] == ["counterfactual"] * 3
    second = httpx.get(first["next"], headers={"Authorization": f"Token {api_token_key(curator)}"}).json()
    assert len(second["results"]) == 1 and second["next"] is None
    assert (
        call(live_server, curator, "GET", "/api/v1/projects/causal-qa/items/?round=7").json()["results"] == []
    )


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("/api/v1/projects/causal-qa/items/?status=done", "status"),
        ("/api/v1/projects/causal-qa/items/?colour=red", "Unknown query parameter(s): colour"),
        ("/api/v1/projects/causal-qa/releases/v7/", "has no release v7"),
        ("/api/v1/projects/causal-qa/releases/v1/validation/", "the splits are train, dev, test"),
        ("/api/v1/projects/causal-qa/agreement/?by=colour", "Unknown breakdown"),
        ("/api/v1/projects/causal-qa/nothing-here/", "No API endpoint"),
    ],
)
def test_errors_are_json_with_a_clear_message(live_server, released, curator, path, message):
    response = call(live_server, curator, "GET", path)
    assert 400 <= response.status_code < 500
    assert message in response.text


def test_unknown_fields_in_a_new_release_are_rejected_not_ignored(live_server, released, owner):
    response = call(
        live_server,
        owner,
        "POST",
        "/api/v1/projects/causal-qa/releases/",
        json={"seed": 3, "splits": {"train": 0.8, "dev": 0.1, "tset": 0.1}},
    )
    assert response.status_code == 400
    assert "tset" in response.json()["splits"]
    response = call(
        live_server,
        owner,
        "POST",
        "/api/v1/projects/causal-qa/releases/",
        json={"splits": {"train": 0.8, "dev": 0.3, "test": 0.1}},
    )
    assert response.status_code == 400 and "add up to 1" in response.json()["splits"][0]


def test_a_split_streams_as_the_jsonl_file_and_pages_as_json(live_server, released, annotator, tmp_path):
    from evaluation.models import Release
    from evaluation.releases.export import export_release

    release = Release.objects.get()
    export_release(release, tmp_path, ("jsonl",))
    streamed = call(
        live_server, annotator, "GET", "/api/v1/projects/causal-qa/releases/1/train/?format=jsonl"
    )
    assert streamed.headers["content-type"] == "application/x-ndjson"
    assert streamed.content == (tmp_path / "data/train.jsonl").read_bytes()
    paged = call(
        live_server, annotator, "GET", "/api/v1/projects/causal-qa/releases/v1/train/?page_size=2"
    ).json()
    assert (
        len(paged["results"]) == 2
        and paged["results"][0] == release.items.get(split="train", position=0).data
    )


def test_release_detail_has_the_card_counts_and_checksum(live_server, released, annotator):
    body = call(live_server, annotator, "GET", "/api/v1/projects/causal-qa/releases/v1/").json()
    assert body["status"] == "ready" and len(body["checksum"]) == 64
    assert body["card"].startswith("---\n") and body["counts"]["n_items"] == 10
    assert body["split_urls"]["dev"].endswith("/api/v1/projects/causal-qa/releases/v1/dev/")


def test_agreement_over_the_api(live_server, released, curator):
    body = call(live_server, curator, "GET", "/api/v1/projects/causal-qa/agreement/?by=causal_class").json()
    assert [section["key"] for section in body["sections"]] == ["", "associational"]
    vote = body["sections"][0]["rows"][0]
    assert vote["criterion"] == "vote" and vote["n_units"] == 5
    # Everyone voted "accept": agreement is undefined, and the answer says why instead of giving NaN.
    assert vote["krippendorff_alpha"]["value"] is None and "undefined" in vote["krippendorff_alpha"]["note"]


def test_a_session_signed_in_on_the_site_can_use_the_api(released, client_for, annotator):
    response = client_for(annotator).get("/api/v1/projects/causal-qa/releases/")
    assert response.status_code == 200 and response.json()["results"][0]["tag"] == "v1"
