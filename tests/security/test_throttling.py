"""Guessing passwords is throttled per account and per address, on the sign-in page and the admin's alike, and
the API throttles its callers; every refusal says when to try again."""

import pytest
from django.urls import reverse
from rest_framework.throttling import SimpleRateThrottle

from tests.factories import PASSWORD, UserFactory, api_token_key

pytestmark = pytest.mark.django_db

LIMIT = 5


def sign_in(client, username, password, address="203.0.113.7", url=None):
    return client.post(
        url or reverse("login"), {"username": username, "password": password}, REMOTE_ADDR=address
    )


def test_an_account_is_locked_for_the_address_that_guessed_after_five_wrong_passwords(client):
    UserFactory(username="ana")
    answers = [sign_in(client, "ana", "errada").status_code for _attempt in range(LIMIT)]
    assert answers == [200] * (LIMIT - 1) + [429]  # the fifth failure locks the pair
    locked = sign_in(client, "ana", PASSWORD)
    assert locked.status_code == 429
    assert int(locked["Retry-After"]) == 15 * 60
    assert "Try again in 15 minutes" in locked.content.decode()
    assert "_auth_user_id" not in client.session


def test_a_stranger_guessing_cannot_lock_the_owner_of_an_account_out(client):
    UserFactory(username="admin", is_staff=True)
    for _attempt in range(3 * LIMIT):
        sign_in(client, "admin", "errada", address="198.51.100.66")
    assert sign_in(client, "admin", PASSWORD, address="192.0.2.10").status_code == 302


def test_an_address_failing_for_many_accounts_is_refused_for_a_while(client, settings):
    settings.LOGIN_ADDRESS_FAILURE_LIMIT = 8
    UserFactory(username="bia")
    for attempt in range(8):
        assert sign_in(client, f"ninguem{attempt}", "errada").status_code == 200
    refused = sign_in(client, "bia", PASSWORD)
    assert refused.status_code == 429
    assert 0 < int(refused["Retry-After"]) <= 15 * 60
    assert sign_in(client, "bia", PASSWORD, address="192.0.2.1").status_code == 302  # elsewhere she signs in


def test_the_admin_login_is_throttled_too(client):
    UserFactory(username="root", is_staff=True, is_superuser=True)
    url = reverse("admin:login")
    for _attempt in range(LIMIT):
        sign_in(client, "root", "errada", url=url)
    locked = sign_in(client, "root", PASSWORD, url=url)
    assert locked.status_code == 429 and locked["Retry-After"]


def test_a_right_password_before_the_limit_signs_in_and_clears_the_count(client):
    UserFactory(username="caio")
    for _attempt in range(LIMIT - 1):
        sign_in(client, "caio", "errada")
    assert sign_in(client, "caio", PASSWORD).status_code == 302
    client.logout()
    for _attempt in range(LIMIT - 1):
        sign_in(client, "caio", "errada")
    assert sign_in(client, "caio", PASSWORD).status_code == 302


@pytest.mark.parametrize("by", ["token", "session"])
def test_the_api_throttles_each_caller_and_says_when_to_try_again(client, monkeypatch, project, curator, by):
    monkeypatch.setattr(SimpleRateThrottle, "THROTTLE_RATES", {"user": "3/minute", "anon": "3/minute"})
    headers = {}
    if by == "token":
        headers = {"Authorization": f"Token {api_token_key(curator)}"}
    else:
        client.force_login(curator)
    answers = [client.get("/api/v1/projects/", headers=headers) for _ in range(4)]
    assert [answer.status_code for answer in answers] == [200, 200, 200, 429]
    assert 0 < int(answers[-1]["Retry-After"]) <= 60
    assert "Expected available in" in answers[-1].json()["detail"]


def test_the_api_throttle_holds_under_concurrent_requests(project, curator, monkeypatch, transactional_db):
    """16 threads send 200 requests at a rate of 60 a minute: exactly 60 pass (a read-then-write count let 92)."""
    import threading
    import time
    from types import SimpleNamespace

    from django.db import connection
    from django.test import Client

    from core import throttling

    monkeypatch.setattr(SimpleRateThrottle, "THROTTLE_RATES", {"user": "60/minute", "anon": "60/minute"})
    # The windows are whole minutes of the clock: requests sent across the turn of a minute are counted in two
    # windows (64 passed once). The throttle's clock stands still in the middle of this minute.
    middle_of_the_minute = time.time() // 60 * 60 + 30
    monkeypatch.setattr(throttling, "time", SimpleNamespace(time=lambda: middle_of_the_minute))
    headers = {"Authorization": f"Token {api_token_key(curator)}"}
    answers = []
    lock = threading.Lock()
    start = threading.Barrier(16, timeout=20)

    def send(count):
        client = Client()
        start.wait()
        try:
            for _ in range(count):
                status = client.get("/api/v1/projects/", headers=headers).status_code
                with lock:
                    answers.append(status)
        finally:
            connection.close()

    threads = [threading.Thread(target=send, args=(13 if n < 8 else 12,)) for n in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert len(answers) == 200
    assert answers.count(200) == 60, answers.count(200)
    assert answers.count(429) == 140
