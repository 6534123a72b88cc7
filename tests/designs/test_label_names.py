"""A design's own labels (CausalBench perspectives, CausalityCheck verdicts and labels) are shown by name in the
reader's language, never as raw ids, unless the project named the label itself."""

import pytest
from django.utils import translation

from annotation.labels import class_label
from designs.causalbench.design import perspective_label
from tests.factories import ProjectFactory

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    "design, label, english, portuguese",
    [
        (
            "causalbench",
            "cause_to_effect_intervention",
            "Cause-to-Effect with Intervention",
            "Da causa ao efeito com intervenção",
        ),
        ("causalitycheck", "correct_and_reliable", "Correct and reliable", "Correta e confiável"),
        ("causalitycheck", "invalid_chain", "Invalid chain", "Cadeia inválida"),
    ],
)
def test_a_design_label_reads_by_name_in_each_language(design, label, english, portuguese):
    project = ProjectFactory(design=design)
    with translation.override("en"):
        assert class_label(project, label) == english
    with translation.override("pt-br"):
        assert class_label(project, label) == portuguese


def test_the_project_own_name_for_a_label_wins():
    project = ProjectFactory(
        design="causalitycheck",
        label_names={"answerable": {"en": "Can be answered", "pt-BR": "Dá para responder"}},
    )
    with translation.override("pt-br"):
        assert class_label(project, "answerable") == "Dá para responder"


def test_a_perspective_label_is_translated_on_pages():
    with translation.override("pt-br"):
        assert perspective_label("effect_to_cause") == "Do efeito à causa"


def test_a_causalitycheck_item_page_names_its_role_and_label_in_portuguese(client, curator):
    from annotation.designs import design_for
    from annotation.models import Item, Membership, Project

    design = design_for("causalitycheck")
    project = Project.objects.create(
        name="Checklist",
        slug="checklist-pt",
        design="causalitycheck",
        language="pt-BR",
        **design.project_defaults(),
    )
    Membership.objects.create(user=curator, project=project, role=Membership.Role.CURATOR)
    design.load_example(project, {"admin": curator})
    item = Item.objects.filter(project=project, metadata__role="correct_but_prone_to_error").first()
    client.force_login(curator)
    page = client.get(f"/p/{project.slug}/items/{item.pk}/", HTTP_ACCEPT_LANGUAGE="pt-BR").content.decode()
    assert "<dt>Papel</dt><dd>Correta, mas sujeita a erro</dd>" in page
    assert "correct_but_prone_to_error</dd>" not in page


def test_a_causalbench_scenario_domain_reads_by_name():
    from designs.causalbench.templatetags.design_tags import domain_label

    with translation.override("pt-br"):
        assert [domain_label(value) for value in ("math", "code", None)] == ["Matemática", "Código", "Texto"]
