"""Behind the TLS proxy: the client's address and scheme come from the proxy's headers only when the request
comes from the proxy, so sign-in throttling counts each client, and nobody else can claim an address or https."""

import pytest
from django.test import override_settings
from django.urls import reverse

from core.proxy import client_address
from tests.factories import PASSWORD, UserFactory

pytestmark = pytest.mark.django_db

PROXY = "172.30.0.2"
LIMIT = 5


def through_proxy(client, username, password, client_ip):
    """A sign-in as the proxy forwards it: from the proxy's address, naming the client in X-Forwarded-For."""
    return client.post(
        reverse("login"),
        {"username": username, "password": password},
        REMOTE_ADDR=PROXY,
        HTTP_X_FORWARDED_FOR=f"10.9.9.9, {client_ip}",  # what the client wrote, then what the proxy saw
        HTTP_X_FORWARDED_PROTO="https",
    )


@pytest.fixture
def behind_proxy(settings):
    settings.TRUSTED_PROXIES = ["172.30.0.0/24"]


def test_the_client_address_is_the_last_one_the_trusted_proxy_added(settings):
    settings.TRUSTED_PROXIES = ["172.30.0.0/24"]
    meta = {"REMOTE_ADDR": PROXY, "HTTP_X_FORWARDED_FOR": "1.2.3.4, 203.0.113.5"}
    assert client_address(meta) == "203.0.113.5"
    assert client_address({**meta, "HTTP_X_FORWARDED_FOR": "203.0.113.5, 172.30.0.3"}) == "203.0.113.5"
    assert client_address({**meta, "HTTP_X_FORWARDED_FOR": "not-an-address"}) == PROXY
    assert client_address({**meta, "REMOTE_ADDR": "198.51.100.1"}) == "198.51.100.1"  # not the proxy


def test_behind_the_proxy_one_clients_guesses_lock_nobody_else_out(client, behind_proxy):
    UserFactory(username="admin", is_staff=True)
    UserFactory(username="ana")
    for _attempt in range(LIMIT + 2):
        through_proxy(client, "admin", "errada", "198.51.100.66")
    assert through_proxy(client, "admin", PASSWORD, "198.51.100.66").status_code == 429
    client.logout()
    assert through_proxy(client, "admin", PASSWORD, "192.0.2.10").status_code == 302  # the real admin
    client.logout()
    assert through_proxy(client, "ana", PASSWORD, "192.0.2.11").status_code == 302


def test_behind_the_proxy_an_address_trying_many_accounts_is_limited_alone(client, behind_proxy, settings):
    settings.LOGIN_ADDRESS_FAILURE_LIMIT = 6
    UserFactory(username="bia")
    for attempt in range(6):
        through_proxy(client, f"ninguem{attempt}", "errada", "198.51.100.77")
    assert through_proxy(client, "bia", PASSWORD, "198.51.100.77").status_code == 429
    assert through_proxy(client, "bia", PASSWORD, "192.0.2.12").status_code == 302


def test_forwarded_headers_from_anyone_but_the_proxy_are_ignored(client, behind_proxy, settings):
    UserFactory(username="caio")
    for attempt in range(LIMIT):  # a client rotating the address it claims is still one address
        client.post(
            reverse("login"),
            {"username": "caio", "password": "errada"},
            REMOTE_ADDR="198.51.100.88",
            HTTP_X_FORWARDED_FOR=f"203.0.113.{attempt}",
        )
    assert through_proxy(client, "caio", PASSWORD, "198.51.100.88").status_code == 429


@override_settings(SECURE_SSL_REDIRECT=True, SECURE_PROXY_SSL_HEADER=("HTTP_X_FORWARDED_PROTO", "https"))
def test_https_is_believed_only_from_the_proxy(client, behind_proxy):
    from_proxy = client.get(reverse("login"), REMOTE_ADDR=PROXY, HTTP_X_FORWARDED_PROTO="https")
    assert from_proxy.status_code == 200
    direct = client.get(reverse("login"), REMOTE_ADDR="198.51.100.9", HTTP_X_FORWARDED_PROTO="https")
    assert direct.status_code == 301  # not https: redirected, as any plain request
