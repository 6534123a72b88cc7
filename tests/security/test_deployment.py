"""Deployment: docker-compose's production settings pass `check --deploy`, the repository's development key is
refused, every page carries a Content-Security-Policy with nothing inline to run, passwords are checked against
the account, people change their own, and a 403 is logged as one line."""

import logging
import os
import re
import secrets
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from django.conf import settings
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.urls import reverse

from core.security import OneLineForbidden
from tests.factories import PASSWORD, UserFactory

ROOT = Path(settings.BASE_DIR)


def compose_environment(tmp_path) -> dict:
    """The web service's environment in docker-compose.yml, with its defaults and a fresh secret key."""
    app = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["x-app"]["environment"]
    env = {
        "PATH": os.environ["PATH"],
        "CAUSALQA_VAR_DIR": str(tmp_path),
        "SECRET_KEY": secrets.token_urlsafe(50),
    }
    for name, value in app.items():
        if name == "SECRET_KEY":
            continue
        default = re.fullmatch(r"\$\{\w+:-(.*)\}", str(value))
        env[name] = default.group(1) if default else str(value)
    env["ALLOWED_HOSTS"] = "causalqa.example.org"
    return env


def manage(env, *args):
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_check_deploy_is_clean_with_docker_composes_production_settings(tmp_path):
    result = manage(compose_environment(tmp_path), "check", "--deploy", "--fail-level", "WARNING")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


def test_the_repositorys_development_key_is_refused_when_debug_is_off(tmp_path):
    env = {**compose_environment(tmp_path), "SECRET_KEY": "insecure-embedded-default-key-5e0f0c7a1b"}
    result = manage(env, "check")
    assert result.returncode != 0 and "development key" in result.stderr


@pytest.mark.django_db
def test_pages_carry_a_content_security_policy_that_allows_only_this_sites_scripts(
    client_for, curator, project
):
    response = client_for(curator).get(reverse("annotation:project_detail", args=[project.slug]))
    policy = response["Content-Security-Policy"]
    assert (
        "script-src 'self'" in policy and "unsafe-inline" not in policy.split("script-src")[1].split(";")[0]
    )
    assert "frame-ancestors 'none'" in policy


def test_no_template_has_an_inline_script_or_event_handler():
    offenders = []
    for path in ROOT.glob("**/templates/**/*.html"):
        if ".venv" in path.parts:
            continue
        text = path.read_text(encoding="utf-8")
        if re.search(r"<script(?![^>]*\bsrc=)[^>]*>", text) or re.search(r"\son[a-z]+=\"", text):
            offenders.append(str(path.relative_to(ROOT)))
    assert offenders == []


@pytest.mark.django_db
def test_a_password_like_the_username_is_refused():
    user = UserFactory(username="mariana.souza", email="mariana@example.org")
    with pytest.raises(ValidationError):
        validate_password("mariana.souza1", user=user)
    validate_password("pergunta causal sobre chuva", user=user)


@pytest.mark.django_db
def test_a_person_changes_their_own_password(client_for):
    user = UserFactory(username="joana")
    client = client_for(user)
    response = client.post(
        reverse("password_change"),
        {
            "old_password": PASSWORD,
            "new_password1": "chuva molha a rua 2024",
            "new_password2": "chuva molha a rua 2024",
        },
    )
    assert response.status_code == 302 and response["Location"] == reverse("password_change_done")
    user.refresh_from_db()
    assert user.check_password("chuva molha a rua 2024")


def test_a_403_is_logged_as_one_line():
    try:
        raise PermissionError("This needs the curator role.")
    except PermissionError:
        record = logging.LogRecord(
            "django.request",
            logging.WARNING,
            __file__,
            1,
            "Forbidden (Permission denied): %s",
            ("/p/x/agreement/",),
            sys.exc_info(),
        )
    record.status_code = 403
    assert OneLineForbidden().filter(record)
    line = logging.Formatter("%(levelname)s %(name)s: %(message)s").format(record)
    assert line == "WARNING django.request: Forbidden (Permission denied): /p/x/agreement/"


def test_compose_publishes_only_the_proxy_and_trusts_forwarded_headers_from_its_network_alone():
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    published = {name for name, service in compose["services"].items() if service.get("ports")}
    assert published == {"proxy"}, published
    assert "proxy" in compose["services"]["web"]["networks"]
    subnet = compose["networks"]["proxy"]["ipam"]["config"][0]["subnet"]
    trusted = re.fullmatch(r"\$\{\w+:-(.*)\}", compose["x-app"]["environment"]["TRUSTED_PROXIES"]).group(1)
    assert trusted == subnet
