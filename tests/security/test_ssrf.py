"""A project owner's endpoint reaches only the hosts the site allows, checked on the address actually dialled;
what an error answer said is kept short and shown to owners only."""

import ipaddress
import socket

import pytest
from django.urls import reverse

from annotation.models import Item
from generation.llm import EndpointConfig, LLMClient, PromptRequest
from generation.llm.guard import AddressPolicy, GuardedBackend, RefusedAddress
from generation.models import LLMCall, ModelEndpoint
from generation.services import job_create
from generation.services.endpoints import endpoint_config
from tests.factories import ItemFactory
from tests.fake_llm import Reply
from tests.generation.conftest import run_now

DEFAULT = AddressPolicy()
PROMPT = PromptRequest(system="", user="Por que a chuva molha a rua?", schema={"type": "object"})

INTERNAL = [
    "127.0.0.1",
    "127.0.0.53",
    "::1",
    "10.0.0.7",
    "172.17.0.1",
    "192.168.1.1",
    "169.254.169.254",
    "100.64.0.1",
    "0.0.0.0",
    "::ffff:127.0.0.1",
    "fd00::1",
    "fe80::1",
]


@pytest.mark.parametrize("address", INTERNAL)
def test_the_default_policy_refuses_private_loopback_link_local_and_metadata_addresses(address):
    assert not DEFAULT.permits("anything.example", ipaddress.ip_address(address))


def test_the_default_policy_allows_public_addresses_and_an_allow_list_opens_named_networks():
    assert DEFAULT.permits("api.openai.com", ipaddress.ip_address("104.18.7.192"))
    listed = AddressPolicy.from_setting(["api.example.org", "10.0.0.0/24"])
    assert listed.permits("api.example.org", ipaddress.ip_address("93.184.216.34"))
    assert not listed.permits("other.example.org", ipaddress.ip_address("93.184.216.34"))
    assert listed.permits("vllm", ipaddress.ip_address("10.0.0.9"))
    assert not listed.permits("api.example.org", ipaddress.ip_address("127.0.0.1"))


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "2130706433", "[::1]"])
def test_the_client_refuses_to_connect_to_internal_hosts_and_makes_no_request(fake_llm, host):
    url = fake_llm.base_url.replace("127.0.0.1", host)
    client = LLMClient(
        EndpointConfig(base_url=url, model="m", timeout=2, max_retries=3, address_policy=DEFAULT)
    )
    result = client.complete(PROMPT)
    assert not result.ok and result.fatal
    assert "may not reach" in result.error
    assert len(result.attempts) == 1  # refused at once, not retried
    assert fake_llm.completions == []


def test_the_check_is_on_the_address_dialled_so_dns_cannot_swap_it(monkeypatch):
    """The name looks public when a form checks it, and resolves to loopback when the worker connects."""
    monkeypatch.setattr(
        socket,
        "getaddrinfo",
        lambda *a, **k: [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", 6379))],
    )
    with pytest.raises(RefusedAddress):
        GuardedBackend(DEFAULT).connect_tcp("rebind.example.org", 6379)


@pytest.mark.django_db
def test_a_project_endpoint_aimed_inside_fails_with_a_reason_and_a_site_wide_one_works(
    project, endpoint, fake_llm, settings
):
    mine = ModelEndpoint.objects.create(
        project=project, name="mine", base_url=endpoint.base_url, model="m", timeout_seconds=2, max_retries=2
    )
    assert endpoint_config(endpoint).address_policy is None  # the admin's endpoint may stay local
    item = ItemFactory(project=project, status=Item.Status.PENDING, reference_answer="", round=0)
    job = job_create(project=project, kind="answer", endpoint=mine, item_ids=[item.pk], enqueue=False)
    run_now(job)
    call = LLMCall.objects.get(job=job)
    assert call.status == LLMCall.Status.FAILED and "may not reach" in call.error
    assert fake_llm.completions == []
    settings.LLM_ALLOWED_HOSTS = ["public", "127.0.0.1"]
    assert endpoint_config(mine).address_policy.permits("127.0.0.1", ipaddress.ip_address("127.0.0.1"))


@pytest.mark.django_db
def test_an_owner_cannot_save_an_endpoint_at_an_internal_address(project, client_for, owner):
    response = client_for(owner).post(
        reverse("generation:endpoint_list", args=[project.slug]),
        {
            "endpoint-name": "redis",
            "endpoint-base_url": "http://127.0.0.1:6379/v1",
            "endpoint-model": "m",
            "endpoint-max_concurrency": 1,
            "endpoint-requests_per_minute": 0,
            "endpoint-timeout_seconds": 5,
            "endpoint-max_attempts": 1,
            "endpoint-max_retries": 0,
            "endpoint-price_input_per_mtok": 0,
            "endpoint-price_output_per_mtok": 0,
            "endpoint-is_active": "on",
            "endpoint-default_params": "{}",
        },
    )
    assert response.status_code == 400 and "may not reach" in response.content.decode()
    assert not ModelEndpoint.objects.filter(project=project).exists()


@pytest.mark.django_db
def test_an_error_body_is_kept_short_and_shown_to_owners_only(
    project, endpoint, fake_llm, client_for, owner, curator, annotator
):
    secret = "REDIS-INFO " + "x" * 20_000
    fake_llm.script(Reply(status=400, body=secret))
    item = ItemFactory(project=project, status=Item.Status.PENDING, reference_answer="", round=0)
    job = job_create(project=project, kind="answer", endpoint=endpoint, item_ids=[item.pk], enqueue=False)
    run_now(job)
    call = LLMCall.objects.get(job=job)
    assert all(len(attempt["raw"]) <= 300 for attempt in call.attempts)
    assert len(call.error) < 600
    url = reverse("generation:call_detail", args=[call.pk])
    assert "REDIS-INFO" in client_for(owner).get(url).content.decode()
    for reader in (curator, annotator):
        assert "REDIS-INFO" not in client_for(reader).get(url).content.decode()
