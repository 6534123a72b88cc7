"""Adding a local model as a site admin, the address rule a project owner is told, and *Test connection*
(page and command): one short call, the answer or the error in plain words."""

import socket

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from generation.demo_model import DemoModelServer
from generation.models import ModelEndpoint
from generation.services.demo import demo_endpoint_register

from .test_pages import endpoint_post

pytestmark = pytest.mark.django_db

OLLAMA = "http://localhost:11434/v1"


def test_a_site_admin_adds_a_local_ollama_as_a_site_wide_endpoint(project, client_for, owner):
    owner.is_superuser = True
    owner.save()
    client = client_for(owner)
    url = reverse("generation:endpoint_list", args=[project.slug])
    body = client.get(url).content.decode()
    assert "As a site admin you may add a site-wide endpoint on any address" in body

    response = client.post(url, {**endpoint_post("local-ollama", OLLAMA, ""), "endpoint-site_wide": "on"})

    assert response.status_code == 302, response.content.decode()[:2000]
    added = ModelEndpoint.objects.get(name="local-ollama")
    assert added.project is None and added.base_url == OLLAMA


def test_a_site_admin_adding_a_loopback_address_to_one_project_is_told_to_tick_site_wide(
    project, client_for, owner
):
    owner.is_superuser = True
    owner.save()
    response = client_for(owner).post(
        reverse("generation:endpoint_list", args=[project.slug]), endpoint_post("local", OLLAMA, "")
    )
    assert response.status_code == 400
    assert "Tick “Site-wide”" in response.content.decode()
    assert not ModelEndpoint.objects.filter(name="local").exists()


def test_a_project_owner_is_told_the_rule_and_who_can_add_a_local_server(project, client_for, owner):
    client = client_for(owner)
    url = reverse("generation:endpoint_list", args=[project.slug])
    body = client.get(url).content.decode()
    assert "ask a site admin to add it as a site-wide endpoint" in body and "endpoint-site_wide" not in body

    response = client.post(url, {**endpoint_post("local", OLLAMA, ""), "endpoint-site_wide": "on"})

    assert response.status_code == 400
    assert "cannot be used by a project&#x27;s endpoint" in response.content.decode()
    assert not ModelEndpoint.objects.filter(name="local").exists()


def test_test_connection_reports_the_demo_models_answer(project, client_for, owner):
    with DemoModelServer() as server:
        endpoint = demo_endpoint_register(server.base_url)
        response = client_for(owner).post(
            reverse("generation:endpoint_test", args=[project.slug, endpoint.pk]),
            headers={"HX-Request": "true"},
        )
    body = response.content.decode()
    assert response.status_code == 200
    assert "It answers" in body and "scripted demo (not a language model)" in body


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_test_connection_says_plainly_when_nothing_answers(project, client_for, owner):
    endpoint = ModelEndpoint.objects.create(
        name="gone", base_url=f"http://127.0.0.1:{closed_port()}/v1", model="m", timeout_seconds=5
    )
    response = client_for(owner).post(
        reverse("generation:endpoint_test", args=[project.slug, endpoint.pk]), follow=True
    )
    body = response.content.decode()
    assert "Nothing answers at http://127.0.0.1:" in body and "is the server running" in body
    assert "Errno" not in body and "Traceback" not in body


def test_test_connection_is_for_owners_and_for_endpoints_the_project_can_use(
    project, client_for, curator, owner
):
    other = ModelEndpoint.objects.create(
        name="elsewhere", base_url="https://api.example.org/v1", model="m", project=None
    )
    url = reverse("generation:endpoint_test", args=[project.slug, other.pk])
    assert client_for(curator).post(url).status_code == 403
    assert (
        client_for(owner).post(reverse("generation:endpoint_test", args=[project.slug, 999999])).status_code
        == 404
    )


def test_the_command_tests_an_endpoint_by_name(capsys):
    with DemoModelServer() as server:
        endpoint = demo_endpoint_register(server.base_url)
        call_command("test_endpoint", endpoint.name)
    assert "It answers" in capsys.readouterr().out
    with pytest.raises(CommandError, match="no endpoint named 'nope'"):
        call_command("test_endpoint", "nope")


def test_the_models_help_page_shows_the_documentations_models_page(client):
    body = client.get(reverse("generation:models_help")).content.decode()
    assert "Ollama" in body and "http://localhost:11434/v1" in body and "Test connection" in body


def test_the_endpoints_page_reads_in_portuguese(project, client_for, owner, settings):
    demo_endpoint_register("http://127.0.0.1:9/v1")
    client = client_for(owner)
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "pt-br"
    body = client.get(reverse("generation:endpoint_list", args=[project.slug])).content.decode()
    for text in (
        "Testar conexão",
        "Como conectar um modelo",
        "Exemplos: Ollama",
        "peça a um administrador do site",
    ):
        assert text in body, text


def test_the_benchmark_run_form_without_any_model_says_how_to_connect_one(project, client_for, curator):
    ModelEndpoint.objects.all().delete()
    body = client_for(curator).get(reverse("evaluation:run_list", args=[project.slug])).content.decode()
    if 'id="new-run"' in body:
        assert 'id="no-endpoint"' in body and reverse("generation:models_help") in body


def test_with_a_release_and_no_model_the_run_form_says_how_to_connect_one(project, client_for, curator):
    """The run form is shown once a release exists; with no endpoint anywhere it links the models page."""
    from evaluation.services import release_cut
    from tests.evaluation.helpers import approved_items

    approved_items(project, {"associational": 4, "interventional": 2, "counterfactual": 2})
    release_cut(project=project)
    ModelEndpoint.objects.all().delete()
    body = client_for(curator).get(reverse("evaluation:run_list", args=[project.slug])).content.decode()
    assert 'id="new-run"' in body
    assert 'id="no-endpoint"' in body and reverse("generation:models_help") in body
