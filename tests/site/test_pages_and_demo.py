"""The demo loads once, every page it feeds renders, and the interface speaks Portuguese on request."""

import pytest
from django.core.management import call_command
from django.urls import reverse

from annotation.demo import demo_load
from annotation.models import CurationDecision, Item, Judgment, Option, Project

pytestmark = pytest.mark.django_db


def test_the_demo_is_idempotent_and_has_something_for_every_page():
    first = demo_load()
    second = demo_load()
    assert first.created and not second.created
    project = Project.objects.get()
    items = project.items.all()
    assert 35 <= items.count() <= 45
    assert set(items.values_list("causal_class", flat=True)) == {
        "associational",
        "interventional",
        "counterfactual",
    }
    assert project.topics.count() >= 2
    assert items.filter(reference_answer="").exists()  # questions waiting for a human answer
    assert Option.objects.filter(item__project=project).values("item").distinct().count() >= 3
    assert set(Option.objects.values_list("role", flat=True)) == {
        "correct",
        "contradictory",
        "unfounded",
        "reversal",
        "irrelevant",
    }
    assert Judgment.objects.filter(round=1).count() >= 10
    assert items.filter(status=Item.Status.APPROVED).count() == CurationDecision.objects.count() >= 3
    assert set(project.memberships.values_list("user__username", flat=True)) == {
        "admin",
        "curator",
        "annotator1",
        "annotator2",
        "annotator3",
        "careless",
    }


def test_load_demo_prints_the_accounts(capsys):
    call_command("load_demo")
    out = capsys.readouterr().out
    assert "annotator1" in out and "curator" in out


def test_the_demo_pages_render_for_the_curator(client):
    demo_load()
    assert client.login(username="curator", password="curator")
    home = client.get(reverse("annotation:home"))
    assert home.status_code == 200 and "Causal_QA.PT" in home.content.decode()
    detail = client.get(reverse("annotation:project_detail", args=["causal-qa-pt-demo"]))
    body = detail.content.decode()
    assert detail.status_code == 200
    assert "counterfactual" in body and "Approved" in body
    assert client.get(reverse("annotation:import_list", args=["causal-qa-pt-demo"])).status_code == 200


def test_the_login_page_and_health_check(client):
    assert client.get(reverse("login")).status_code == 200
    assert client.get(reverse("annotation:healthz")).content == b"ok"


def test_each_user_can_switch_the_interface_to_portuguese(client, project, annotator):
    client.force_login(annotator)
    response = client.post(reverse("set_language"), {"language": "pt-br", "next": "/"})
    assert response.status_code == 302
    body = client.get(reverse("annotation:project_detail", args=[project.slug])).content.decode()
    assert 'lang="pt-br"' in body
    assert "Itens por classe causal" in body
    assert "Sair" in body
