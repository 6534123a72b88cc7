"""The jobs API over real HTTP: start, follow, cancel; endpoints and templates read-only."""

import httpx
import pytest

from annotation.models import Item
from generation.models import GenerationJob
from tests.factories import ItemFactory, api_token_key

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def api(live_server):
    clients = []

    def client(user):
        clients.append(
            httpx.Client(
                base_url=f"{live_server.url}/api/v1",
                headers={"Authorization": f"Token {api_token_key(user)}"},
                timeout=30,
            )
        )
        return clients[-1]

    yield client
    for opened in clients:  # a kept-alive connection holds a server thread, and its database connection
        opened.close()


def test_a_curator_starts_a_questions_job_and_follows_it(api, project, curator, endpoint):
    client = api(curator)
    response = client.post(
        f"/projects/{project.slug}/jobs/",
        json={
            "kind": "questions",
            "endpoint": endpoint.pk,
            "count": 12,
            "causal_class": "counterfactual",
            "answer_endpoint": endpoint.pk,
            "answer_variant": "class-informed",
        },
    )
    assert response.status_code == 201, response.text
    job = response.json()
    assert (job["kind"], job["status"], job["params"]["count"], job["created_by"]) == (
        "questions",
        "queued",
        12,
        "curator",
    )
    assert job["endpoint"] == {"id": endpoint.pk, "name": "fake", "model": "fake-model-1"}
    assert job["answer_template"]["name"] == "class-informed"

    detail = client.get(f"/projects/{project.slug}/jobs/{job['id']}/")
    assert detail.status_code == 200 and detail.json()["id"] == job["id"]
    listed = client.get(f"/projects/{project.slug}/jobs/").json()
    assert [row["id"] for row in listed["results"]] == [job["id"]]

    cancelled = client.post(f"/projects/{project.slug}/jobs/{job['id']}/cancel/")
    assert cancelled.status_code == 200 and cancelled.json()["status"] == "cancelled"
    # Cancelled before a worker planned any call: nothing to make again.
    retried = client.post(f"/projects/{project.slug}/jobs/{job['id']}/retry/")
    assert retried.status_code == 200 and (retried.json()["retried"], retried.json()["status"]) == (
        0,
        "cancelled",
    )


def test_answers_for_chosen_items(api, project, curator, endpoint):
    items = [
        ItemFactory(project=project, status=Item.Status.PENDING, round=0, reference_answer="")
        for _ in range(3)
    ]
    response = api(curator).post(
        f"/projects/{project.slug}/jobs/",
        json={
            "kind": "answer",
            "endpoint": endpoint.pk,
            "item_ids": [item.pk for item in items],
        },
    )
    assert response.status_code == 201
    assert response.json()["params"]["item_ids"] == [item.pk for item in items]
    assert GenerationJob.objects.get().template.name == "class-agnostic"


def test_bad_requests_say_which_field_is_wrong(api, project, curator, endpoint):
    client = api(curator)
    cases = [
        (
            {"kind": "questions", "endpoint": endpoint.pk, "count": 0, "causal_class": "counterfactual"},
            "count",
        ),
        ({"kind": "questions", "endpoint": endpoint.pk, "count": 3, "causal_class": "x"}, "causal_class"),
        ({"kind": "questions", "endpoint": 999999, "count": 3, "causal_class": "counterfactual"}, "endpoint"),
        ({"kind": "answer", "endpoint": endpoint.pk, "item_ids": [999999]}, "item_ids"),
        ({"kind": "judge_score", "endpoint": endpoint.pk}, "kind"),
        ({"kind": "nonsense", "endpoint": endpoint.pk}, "kind"),
    ]
    for body, field in cases:
        response = client.post(f"/projects/{project.slug}/jobs/", json=body)
        assert response.status_code == 400 and field in response.json(), (body, response.text)
    assert not GenerationJob.objects.exists()


def test_annotators_are_refused_and_outsiders_see_nothing(api, project, annotator, outsider, endpoint):
    assert api(annotator).get(f"/projects/{project.slug}/jobs/").status_code == 403
    assert api(outsider).get(f"/projects/{project.slug}/jobs/").status_code == 404
    body = {"kind": "distractors", "endpoint": endpoint.pk}
    assert api(annotator).post(f"/projects/{project.slug}/jobs/", json=body).status_code == 403


def test_endpoints_and_templates_are_listed_without_any_key(api, project, curator, endpoint):
    client = api(curator)
    endpoints = client.get(f"/projects/{project.slug}/model-endpoints/").json()["results"]
    assert [row["name"] for row in endpoints] == ["fake"]
    assert "api_key_env" not in endpoints[0]
    templates = client.get("/prompt-templates/", params={"kind": "distractors", "language": "pt-BR"}).json()
    [template] = templates["results"]
    assert template["version"] == 1 and template["output_schema"]["required"][0] == "contradictory"


def test_the_schema_documents_the_jobs_api(api, curator):
    schema = api(curator).get("/../schema/").text
    assert "/api/v1/projects/{slug}/jobs/" in schema and "JobCreateInput" in schema
