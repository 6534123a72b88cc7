"""Sessions and users are read with hand-written queries (core/db/auth.py): the same rules as Django's."""

import pytest
from django.conf import settings
from django.contrib.auth import SESSION_KEY
from django.contrib.sessions.backends.db import SessionStore as DjangoSessionStore
from django.contrib.sessions.models import Session
from django.utils import timezone

from core.db.auth import SessionStore, UserBackend

pytestmark = pytest.mark.django_db


def test_a_session_reads_back_what_djangos_own_store_reads(client, annotator):
    client.force_login(annotator)
    key = client.cookies[settings.SESSION_COOKIE_NAME].value

    assert SessionStore(key).load() == DjangoSessionStore(key).load()
    assert SessionStore(key).load()[SESSION_KEY] == str(annotator.pk)


def test_an_expired_or_unknown_session_is_empty_and_gets_a_new_key(client, annotator):
    client.force_login(annotator)
    key = client.cookies[settings.SESSION_COOKIE_NAME].value
    Session.objects.filter(session_key=key).update(expire_date=timezone.now())

    expired = SessionStore(key)
    assert expired.load() == {}
    assert expired.session_key is None
    assert SessionStore("no-such-session-key-00000000000").load() == {}


def test_the_user_comes_back_with_every_field_as_the_orm_gives_it(annotator):
    annotator.last_login = timezone.now()
    annotator.save()
    user = UserBackend().get_user(annotator.pk)

    orm = type(annotator).objects.get(pk=annotator.pk)
    assert {f.attname: getattr(user, f.attname) for f in orm._meta.concrete_fields} == {
        f.attname: getattr(orm, f.attname) for f in orm._meta.concrete_fields
    }
    assert user.is_active is True
    assert UserBackend().get_user("not a number") is None
    assert UserBackend().get_user(10**9) is None


def test_signing_out_a_deactivated_account_or_a_new_password_takes_effect_on_the_next_request(
    client, annotators
):
    first, second, third = annotators
    client.force_login(first)
    assert client.get("/").status_code == 200
    client.post("/accounts/logout/")
    assert client.get("/").status_code == 302

    client.force_login(second)
    second.is_active = False
    second.save()
    assert client.get("/").status_code == 302

    client.force_login(third)
    third.set_password("a different password")
    third.save()
    assert client.get("/").status_code == 302
