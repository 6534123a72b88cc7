"""Every page names the site's icon, and /favicon.ico leads to it: no browser gets a 404 for it."""

import pytest
from django.contrib.staticfiles import finders
from django.templatetags.static import static

pytestmark = pytest.mark.django_db


def test_pages_name_the_icon_and_the_old_address_leads_to_it(client):
    page = client.get("/accounts/login/").content.decode()
    assert f'<link rel="icon" href="{static("favicon.svg")}"' in page
    response = client.get("/favicon.ico")
    assert response.status_code == 301
    assert response["Location"] == static("favicon.svg")
    assert finders.find("favicon.svg"), "the icon is a static file"
