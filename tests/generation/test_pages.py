"""The generation pages: who may see them, starting jobs, live progress, the call page, endpoints."""

import pytest
from django.urls import reverse

from annotation.models import Item, Revision
from generation.models import GenerationJob, LLMCall, ModelEndpoint, ProjectGenerationSettings
from generation.services import job_create
from tests.factories import ItemFactory
from tests.fake_llm import Reply

from .conftest import SECRET, run_now

pytestmark = pytest.mark.django_db


def page(slug, name="project", **kwargs):
    return reverse(f"generation:{name}", kwargs={"slug": slug, **kwargs})


def test_the_generation_page_is_for_curators_and_owners(
    project, client_for, curator, owner, annotator, outsider
):
    assert client_for(curator).get(page(project.slug)).status_code == 200
    assert client_for(owner).get(page(project.slug)).status_code == 200
    assert client_for(annotator).get(page(project.slug)).status_code == 403
    assert client_for(outsider).get(page(project.slug)).status_code == 404


def test_the_project_page_links_to_generation_for_curators_only(project, client_for, curator, annotator):
    overview = reverse("annotation:project_detail", args=[project.slug])
    assert page(project.slug) in client_for(curator).get(overview).content.decode()
    assert page(project.slug) not in client_for(annotator).get(overview).content.decode()


def test_without_an_endpoint_the_page_says_so_plainly(project, client_for, owner, settings):
    settings.LLM_BASE_URL = settings.LLM_MODEL = ""
    body = client_for(owner).get(page(project.slug)).content.decode()
    assert "No model endpoint is configured" in body and "LLM_BASE_URL" in body
    assert 'id="start-questions"' not in body


def test_llm_environment_variables_create_a_default_endpoint_at_start_up(
    project, client_for, curator, settings, monkeypatch
):
    from generation.apps import _endpoint_from_environment

    settings.LLM_BASE_URL, settings.LLM_MODEL = "http://vllm:8000/v1", "llama-3-70b"
    monkeypatch.setenv("LLM_API_KEY", SECRET)
    client_for(curator).get(page(project.slug))
    assert not ModelEndpoint.objects.filter(from_environment=True).exists()  # reading a page writes nothing
    _endpoint_from_environment(sender=None)  # what `migrate` runs at start-up (make run, docker-compose)
    body = client_for(curator).get(page(project.slug)).content.decode()
    endpoint = ModelEndpoint.objects.get(from_environment=True)
    assert (endpoint.base_url, endpoint.model, endpoint.api_key_env, endpoint.project) == (
        "http://vllm:8000/v1",
        "llama-3-70b",
        "LLM_API_KEY",
        None,
    )
    assert "llama-3-70b" in body and 'id="start-questions"' in body
    settings.LLM_BASE_URL = ""
    _endpoint_from_environment(sender=None)
    endpoint.refresh_from_db()
    assert not endpoint.is_active


def test_a_curator_starts_a_questions_job_from_the_page(
    project, client_for, curator, endpoint, django_capture_on_commit_callbacks
):
    form = {
        "questions-endpoint": endpoint.pk,
        "questions-causal_class": "counterfactual",
        "questions-count": 20,
        "questions-batch_size": 10,
        "questions-answer_endpoint": endpoint.pk,
        "questions-answer_variant": "class-informed",
    }
    with django_capture_on_commit_callbacks() as callbacks:
        response = client_for(curator).post(page(project.slug, "job_start", kind="questions"), form)
    job = GenerationJob.objects.get()
    assert response.status_code == 302 and response["Location"] == page(
        project.slug, "job_detail", job_id=job.pk
    )
    assert len(callbacks) == 1  # handed to a worker after commit
    assert (job.kind, job.params["count"], job.params["causal_class"], job.created_by) == (
        "questions",
        20,
        "counterfactual",
        curator,
    )
    assert job.answer_endpoint == endpoint and job.answer_template.name == "class-informed"


def test_answering_with_no_item_chosen_takes_every_waiting_item(project, client_for, curator, endpoint):
    waiting = [
        ItemFactory(project=project, status=Item.Status.PENDING, round=0, reference_answer="")
        for _ in range(3)
    ]
    ItemFactory(project=project, status=Item.Status.APPROVED)
    response = client_for(curator).post(
        page(project.slug, "job_start", kind="answer"),
        {"answer-endpoint": endpoint.pk, "answer-variant": "class-agnostic"},
    )
    assert response.status_code == 302
    assert GenerationJob.objects.get().params["item_ids"] == [item.pk for item in waiting]


def test_a_bad_request_shows_what_is_wrong_next_to_the_field(project, client_for, curator, endpoint):
    approved = ItemFactory(project=project, status=Item.Status.APPROVED)
    response = client_for(curator).post(
        page(project.slug, "job_start", kind="answer"),
        {
            "answer-endpoint": endpoint.pk,
            "answer-variant": "class-agnostic",
            "answer-item_ids": f"{approved.pk}, x",
        },
    )
    assert response.status_code == 400 and "Not an item number: x" in response.content.decode()
    response = client_for(curator).post(
        page(project.slug, "job_start", kind="answer"),
        {
            "answer-endpoint": endpoint.pk,
            "answer-variant": "class-agnostic",
            "answer-item_ids": str(approved.pk),
        },
    )
    assert response.status_code == 400 and f"items must be pending, needs revision: {approved.pk}" in (
        response.content.decode()
    )
    assert not GenerationJob.objects.exists()


def test_the_job_page_polls_until_the_job_ends_then_stops_with_286(
    project, client_for, curator, endpoint, fake_llm
):
    items = [
        ItemFactory(project=project, status=Item.Status.PENDING, round=0, reference_answer="")
        for _ in range(3)
    ]
    job = job_create(
        project=project, kind="answer", endpoint=endpoint, item_ids=[i.pk for i in items], enqueue=False
    )
    url = page(project.slug, "job_detail", job_id=job.pk)
    client = client_for(curator)

    live = client.get(url, headers={"HX-Request": "true"})
    assert live.status_code == 200 and 'hx-trigger="every 1s"' in live.content.decode()
    assert "<html" not in live.content.decode()
    run_now(job)
    done = client.get(url, headers={"HX-Request": "true"})
    body = done.content.decode()
    assert done.status_code == 286 and "hx-trigger" not in body
    assert 'id="job-done">3<' in body and "Succeeded" in body and 'id="job-cost">$0.00' in body
    assert body.count(reverse("generation:call_detail", args=[LLMCall.objects.first().pk])) == 1


def test_the_cancel_button_stops_the_job(project, client_for, curator, endpoint):
    items = [
        ItemFactory(project=project, status=Item.Status.PENDING, round=0, reference_answer="")
        for _ in range(2)
    ]
    job = job_create(
        project=project, kind="answer", endpoint=endpoint, item_ids=[i.pk for i in items], enqueue=False
    )
    response = client_for(curator).post(
        page(project.slug, "job_cancel", job_id=job.pk), headers={"HX-Request": "true"}
    )
    assert response.status_code == 286 and "Cancelled" in response.content.decode()
    job.refresh_from_db()
    assert job.status == GenerationJob.Status.CANCELLED


def test_another_projects_job_is_not_found(project, client_for, curator, endpoint):
    from annotation.models import Project

    other = Project.objects.create(name="Other", slug="other")
    item = ItemFactory(project=other, status=Item.Status.PENDING, reference_answer="")
    job = job_create(project=other, kind="answer", endpoint=endpoint, item_ids=[item.pk], enqueue=False)
    assert client_for(curator).get(page(project.slug, "job_detail", job_id=job.pk)).status_code == 404


def test_the_call_page_shows_prompt_every_attempt_and_the_parsed_output_all_escaped(
    project, client_for, curator, annotator, outsider, endpoint, fake_llm
):
    item = ItemFactory(
        project=project,
        status=Item.Status.PENDING,
        round=0,
        reference_answer="",
        question="Por que <script>alert('q')</script> acontece?",
    )
    fake_llm.script(
        Reply.text("<b>não é JSON</b>"), Reply.json({"answer": "<img src=x onerror=alert(1)> porque sim"})
    )
    job = job_create(project=project, kind="answer", endpoint=endpoint, item_ids=[item.pk], enqueue=False)
    run_now(job)
    call = LLMCall.objects.get(job=job)

    body = client_for(curator).get(reverse("generation:call_detail", args=[call.pk])).content.decode()

    assert "<script>alert" not in body and "&lt;script&gt;alert(&#x27;q&#x27;)&lt;/script&gt;" in body
    assert "<img src=x" not in body and "&lt;img src=x onerror=alert(1)&gt; porque sim" in body
    assert "<b>não é JSON</b>" not in body and "&lt;b&gt;não é JSON&lt;/b&gt;" in body
    assert "Attempt 1: invalid" in body and "Attempt 2: ok" in body
    assert "fake-model-1" in body and "answer/class-agnostic [pt-BR] v1" in body
    assert "Você responde perguntas em português do Brasil" in body  # the system prompt
    assert client_for(annotator).get(reverse("generation:call_detail", args=[call.pk])).status_code == 200
    assert client_for(outsider).get(reverse("generation:call_detail", args=[call.pk])).status_code == 404


def test_generated_content_is_marked_with_model_template_and_call(
    project, client_for, curator, endpoint, fake_llm
):
    job = job_create(
        project=project,
        kind="questions",
        endpoint=endpoint,
        count=2,
        causal_class="interventional",
        answer_endpoint=endpoint,
        enqueue=False,
    )
    run_now(job)
    body = client_for(curator).get(page(project.slug, "job_detail", job_id=job.pk)).content.decode()
    created = Item.objects.filter(origin=Item.Origin.GENERATED)
    assert created.count() == 2
    for item in created:
        assert item.question in body
        question_call = item.revisions.get(kind=Revision.Kind.CREATED).llm_call_id
        answer_call = item.answer_provenance["call_id"]
        assert reverse("generation:call_detail", args=[question_call]) in body
        assert reverse("generation:call_detail", args=[answer_call]) in body
    assert body.count('class="generated-mark"') == 4 and "questions/default [pt-BR] v1" in body


def test_the_api_key_never_reaches_the_database_a_page_or_a_log(
    project, client_for, owner, endpoint, fake_llm, caplog
):
    item = ItemFactory(project=project, status=Item.Status.PENDING, round=0, reference_answer="")
    fake_llm.script(Reply.unauthorized())
    job = job_create(project=project, kind="answer", endpoint=endpoint, item_ids=[item.pk], enqueue=False)
    with caplog.at_level("DEBUG"):
        run_now(job)
    assert fake_llm.requests[0].headers["authorization"] == f"Bearer {SECRET}"  # it was used…
    client = client_for(owner)
    pages = [
        page(project.slug),
        page(project.slug, "job_detail", job_id=job.pk),
        page(project.slug, "endpoint_list"),
        reverse("generation:call_detail", args=[LLMCall.objects.get().pk]),
    ]
    for url in pages:
        assert SECRET not in client.get(url).content.decode(), url
    assert SECRET not in caplog.text
    from django.core import serializers

    for model in (ModelEndpoint, LLMCall, GenerationJob):
        assert SECRET not in serializers.serialize("json", model.objects.all())


def test_owners_add_and_edit_their_projects_endpoints(project, client_for, owner, curator, endpoint):
    url = page(project.slug, "endpoint_list")
    assert client_for(curator).get(url).status_code == 403
    client = client_for(owner)
    body = client.get(url).content.decode()
    assert "CAUSALQA_TEST_API_KEY" in body and "set" in body and SECRET not in body

    response = client.post(
        url,
        {
            "endpoint-name": "ollama",
            "endpoint-base_url": "http://ollama:11434/v1",
            "endpoint-model": "qwen2.5:7b",
            "endpoint-api_key_env": "",
            "endpoint-default_params": '{"temperature": 0.2}',
            "endpoint-supports_json_schema": "on",
            "endpoint-max_concurrency": 2,
            "endpoint-requests_per_minute": 60,
            "endpoint-timeout_seconds": 120,
            "endpoint-max_attempts": 3,
            "endpoint-max_retries": 6,
            "endpoint-price_input_per_mtok": 0,
            "endpoint-price_output_per_mtok": 0,
            "endpoint-is_active": "on",
        },
    )
    assert response.status_code == 302
    added = ModelEndpoint.objects.get(name="ollama")
    assert (added.project, added.default_params, added.max_concurrency) == (project, {"temperature": 0.2}, 2)

    edit = page(project.slug, "endpoint_edit", endpoint_id=added.pk)
    assert client.get(edit).status_code == 200
    assert (
        client.get(page(project.slug, "endpoint_edit", endpoint_id=endpoint.pk)).status_code == 404
    )  # site-wide


@pytest.mark.parametrize("variable", ["SECRET_KEY", "DATABASE_URL", "lowercase_api_key"])
def test_an_endpoint_cannot_name_a_variable_that_is_not_an_api_key(project, client_for, owner, variable):
    response = client_for(owner).post(
        page(project.slug, "endpoint_list"),
        {
            "endpoint-name": "evil",
            "endpoint-base_url": "http://attacker.example/v1",
            "endpoint-model": "m",
            "endpoint-api_key_env": variable,
            "endpoint-default_params": "{}",
            "endpoint-max_concurrency": 1,
            "endpoint-requests_per_minute": 1,
            "endpoint-timeout_seconds": 10,
            "endpoint-max_attempts": 1,
            "endpoint-max_retries": 0,
            "endpoint-price_input_per_mtok": 0,
            "endpoint-price_output_per_mtok": 0,
        },
    )
    assert response.status_code == 400 and "ending in API_KEY" in response.content.decode()
    assert not ModelEndpoint.objects.filter(name="evil").exists()


def endpoint_post(name, base_url, variable):
    return {
        "endpoint-name": name,
        "endpoint-base_url": base_url,
        "endpoint-model": "m",
        "endpoint-api_key_env": variable,
        "endpoint-default_params": "{}",
        "endpoint-max_concurrency": 1,
        "endpoint-requests_per_minute": 1,
        "endpoint-timeout_seconds": 10,
        "endpoint-max_attempts": 1,
        "endpoint-max_retries": 0,
        "endpoint-price_input_per_mtok": 0,
        "endpoint-price_output_per_mtok": 0,
    }


def test_a_project_endpoint_sends_the_servers_key_only_where_an_admin_sends_it(
    project, client_for, owner, endpoint, monkeypatch, settings
):
    """The site-wide endpoint sends $KEY_ENV to the fake server; an owner may reuse the key there only."""
    from generation.services.endpoints import endpoint_config

    settings.LLM_ALLOWED_HOSTS = [
        "public",
        "127.0.0.1",
    ]  # the site lets project endpoints reach the fake server

    client = client_for(owner)
    stolen = client.post(
        page(project.slug, "endpoint_list"),
        endpoint_post("evil", "http://attacker.example/v1", endpoint.api_key_env),
    )
    assert stolen.status_code == 400
    assert "may only go to the addresses an administrator set up" in stolen.content.decode()
    assert not ModelEndpoint.objects.filter(name="evil").exists()

    same_server = endpoint.base_url.replace("/v1", "/v1/")
    assert (
        client.post(
            page(project.slug, "endpoint_list"), endpoint_post("mine", same_server, endpoint.api_key_env)
        ).status_code
        == 302
    )
    mine = ModelEndpoint.objects.get(name="mine", project=project)
    monkeypatch.setenv(endpoint.api_key_env, SECRET)
    assert endpoint_config(mine).api_key == SECRET

    # Written behind the form's back (the admin, a script): the key still does not leave.
    ModelEndpoint.objects.filter(pk=mine.pk).update(base_url="http://attacker.example/v1")
    mine.refresh_from_db()
    assert endpoint_config(mine).api_key is None
    assert endpoint_config(endpoint).api_key == SECRET


def test_owners_choose_which_endpoint_revises_answers(project, client_for, owner, endpoint):
    response = client_for(owner).post(
        page(project.slug, "endpoint_list"),
        {"revision-revise_automatically": "on", "revision-revision_endpoint": endpoint.pk},
    )
    assert response.status_code == 302
    assert ProjectGenerationSettings.objects.get(project=project).revision_endpoint == endpoint
    body = client_for(owner).get(page(project.slug)).content.decode()
    assert "rewrites its answer from the reviewers" in body


def test_the_generation_pages_speak_portuguese_on_request(project, client_for, owner, endpoint):
    client = client_for(owner)
    client.post(reverse("set_language"), {"language": "pt-br", "next": "/"})
    body = client.get(page(project.slug)).content.decode()
    assert "Geração" in body and "Perguntas novas de uma classe" in body and "Gerar perguntas" in body
    assert (
        "Endpoints que este projeto pode usar"
        in client.get(page(project.slug, "endpoint_list")).content.decode()
    )


def test_the_admin_pages_of_the_generation_models_open(admin_client, project, endpoint, fake_llm):
    item = ItemFactory(project=project, status=Item.Status.PENDING, round=0, reference_answer="")
    job = job_create(project=project, kind="answer", endpoint=endpoint, item_ids=[item.pk], enqueue=False)
    run_now(job)
    objects = {
        "modelendpoint": endpoint,
        "generationjob": job,
        "llmcall": LLMCall.objects.get(),
        "prompttemplate": job.template,
    }
    for name, obj in objects.items():
        assert admin_client.get(reverse(f"admin:generation_{name}_changelist")).status_code == 200, name
        assert (
            admin_client.get(reverse(f"admin:generation_{name}_change", args=[obj.pk])).status_code == 200
        ), name
    assert admin_client.get(reverse("admin:generation_prompttemplate_add")).status_code == 200


def test_a_started_job_is_followed_by_its_live_status_not_a_flash_that_goes_stale(
    project, client_for, curator, endpoint, django_capture_on_commit_callbacks
):
    form = {
        "questions-endpoint": endpoint.pk,
        "questions-causal_class": "counterfactual",
        "questions-count": 5,
        "questions-batch_size": 5,
        "questions-answer_endpoint": endpoint.pk,
        "questions-answer_variant": "class-informed",
    }
    with django_capture_on_commit_callbacks():
        response = client_for(curator).post(
            page(project.slug, "job_start", kind="questions"), form, follow=True
        )
    html = response.content.decode()
    assert 'class="messages"' not in html, "no 'queued' message stays on the page while the job runs"
    assert 'id="job-status"' in html
    assert 'hx-trigger="every 1s"' in html, "the status follows the job"
