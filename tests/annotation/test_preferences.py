"""A person's language and shortcut preference live on their profile, not in one browser's cookie."""

import pytest
from django.urls import reverse

from annotation.models import Profile
from tests.factories import PASSWORD

pytestmark = pytest.mark.django_db


def test_the_language_chosen_in_the_top_bar_is_saved_on_the_profile(client_for, annotator, project):
    client = client_for(annotator)
    client.post(reverse("annotation:language_set"), {"language": "pt-br", "next": "/"})
    assert Profile.objects.get(user=annotator).language == "pt-br"
    client.logout()
    client.cookies.clear()
    client.post(reverse("login"), {"username": annotator.username, "password": PASSWORD})
    page = client.get("/", HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert 'lang="pt-br"' in page, "another browser, signed in: the profile's language wins"


def test_anonymous_pages_keep_the_language_in_a_cookie(client):
    response = client.post(
        reverse("annotation:language_set"), {"language": "pt-br", "next": "/accounts/login/"}
    )
    assert response.cookies["django_language"].value == "pt-br"
    assert 'lang="pt-br"' in client.get("/accounts/login/").content.decode()


def test_an_unknown_language_or_a_foreign_next_page_is_ignored(client_for, annotator):
    response = client_for(annotator).post(
        reverse("annotation:language_set"), {"language": "klingon", "next": "https://elsewhere.example/"}
    )
    assert response["Location"] == "/"
    assert not Profile.objects.filter(user=annotator, language="klingon").exists()


def test_the_language_select_is_applied_with_a_button_not_on_change(client_for, annotator):
    page = client_for(annotator).get("/").content.decode()
    assert "onchange" not in page
    assert 'class="inline language-form"' in page


def test_every_page_starts_with_a_skip_link_to_the_content(client_for, annotator):
    page = client_for(annotator).get("/").content.decode()
    assert 'class="skip-link" href="#main"' in page
    assert '<main id="main"' in page


def test_single_key_shortcuts_can_be_turned_off(client_for, annotator):
    client = client_for(annotator)
    assert 'data-shortcuts="on"' in client.get("/").content.decode()
    response = client.post(reverse("annotation:preferences"), {"language": ""})
    assert response.status_code == 302
    assert Profile.objects.get(user=annotator).shortcuts is False
    assert 'data-shortcuts="off"' in client.get("/").content.decode()
