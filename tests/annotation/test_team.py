"""Owners manage the team and the project's settings in the app; every change is recorded and shown."""

import pytest
from django.urls import reverse

from annotation.models import Membership, Project, ProjectChange
from annotation.queue import assignment_next
from annotation.team import criteria_parse, labels_parse, tags_parse
from tests.annotation.helpers import judge
from tests.factories import ItemFactory, UserFactory

pytestmark = pytest.mark.django_db


def url(project, name, *args):
    return reverse(f"annotation:{name}", args=[project.slug, *args])


def settings_post(project, **overrides):
    data = {
        "language": "pt-BR",
        "overlap": "3",
        "assignment_timeout_minutes": "30",
        "allow_self_review": "on",
        "criteria": "adherence; Adherence to the question; Aderência à pergunta; 1; 5\n"
        "fluency; Fluency and correctness; Fluência e correção; 1; 5\n"
        "coherence; Coherence and logical progression; Coerência e progressão lógica; 1; 5\n"
        "relevance; Relevance and objectivity; Relevância e objetividade; 1; 5",
        "label_set": "associational; associational; associativa\ninterventional; interventional; intervencional\n"
        "counterfactual; counterfactual; contrafactual",
        "guidelines": "# Diretrizes\n\nAvalie cada critério de 1 a 5.",
    }
    data.update(overrides)
    return data


def test_expertise_tags_are_typed_as_comma_separated_words():
    assert tags_parse("saúde, economia; Saúde,  políticas públicas ,") == [
        "saúde",
        "economia",
        "políticas públicas",
    ]


def test_owner_adds_a_member_by_e_mail_with_tags(client_for, owner, project):
    UserFactory(username="maria", email="maria@usp.br")
    response = client_for(owner).post(
        url(project, "members"),
        {
            "add-user": "Maria@USP.br",
            "add-role": "curator",
            "add-expertise": "saúde, economia",
        },
    )
    assert response.status_code == 302
    membership = Membership.objects.get(project=project, user__username="maria")
    assert membership.role == "curator"
    assert membership.expertise == ["saúde", "economia"]
    change = ProjectChange.objects.get(kind="member_added")
    assert (change.user, change.subject) == (owner, "maria")


def test_an_unknown_person_is_named_in_the_error(client_for, owner, project):
    response = client_for(owner).post(
        url(project, "members"), {"add-user": "ninguem", "add-role": "annotator"}
    )
    assert response.status_code == 400
    assert "Nobody is called “ninguem”" in response.content.decode()


def test_owner_changes_a_role_and_tags_and_the_history_shows_it(client_for, owner, project, annotator):
    membership = Membership.objects.get(project=project, user=annotator)
    client = client_for(owner)
    client.post(
        url(project, "member_update", membership.pk),
        {f"m{membership.pk}-role": "curator", f"m{membership.pk}-expertise": "direito"},
    )
    membership.refresh_from_db()
    assert (membership.role, membership.expertise) == ("curator", ["direito"])
    page = client.get(url(project, "project_history")).content.decode()
    assert "annotator1" in page
    assert "direito" in page


def test_the_last_owner_cannot_be_removed_or_demoted(client_for, owner, project):
    membership = Membership.objects.get(project=project, user=owner)
    client = client_for(owner)
    client.post(url(project, "member_remove", membership.pk))
    assert Membership.objects.filter(pk=membership.pk).exists()
    response = client.post(
        url(project, "member_update", membership.pk), {f"m{membership.pk}-role": "annotator"}
    )
    assert response.status_code == 400
    assert Membership.objects.get(pk=membership.pk).role == "owner"


def test_removing_a_member_keeps_their_judgments(client_for, owner, project, annotator):
    ItemFactory(project=project)
    judge(assignment_next(project=project, annotator=annotator))
    client_for(owner).post(url(project, "member_remove", Membership.objects.get(user=annotator).pk))
    assert not Membership.objects.filter(project=project, user=annotator).exists()
    assert annotator.judgments.count() == 1
    assert ProjectChange.objects.filter(kind="member_removed", subject="annotator1").exists()


@pytest.mark.parametrize("user_fixture", ["curator", "annotator"])
def test_only_owners_manage_the_team_and_settings(client_for, project, request, user_fixture):
    client = client_for(request.getfixturevalue(user_fixture))
    assert client.get(url(project, "members")).status_code == 403
    assert client.get(url(project, "project_settings")).status_code == 403


def test_outsiders_get_a_404(client_for, outsider, project):
    assert client_for(outsider).get(url(project, "members")).status_code == 404


def test_owner_changes_the_settings_and_each_change_is_recorded(client_for, owner, project):
    response = client_for(owner).post(
        url(project, "project_settings"),
        settings_post(
            project,
            overlap="2",
            assignment_timeout_minutes="45",
        ),
    )
    assert response.status_code == 302
    project.refresh_from_db()
    assert (project.overlap, project.assignment_timeout_minutes) == (2, 45)
    assert project.label_names["associational"] == {"en": "associational", "pt-BR": "associativa"}
    change = ProjectChange.objects.get(kind="settings")
    assert change.details["overlap"] == [3, 2]
    assert change.user == owner


def test_owner_sets_the_adaptive_overlap_the_aggregation_and_the_control_rate(client_for, owner, project):
    response = client_for(owner).post(
        url(project, "project_settings"),
        settings_post(
            project,
            overlap="2",
            overlap_max="5",
            overlap_threshold="0.95",
            aggregation="mace",
            control_rate="0.1",
        ),
    )
    assert response.status_code == 302
    project.refresh_from_db()
    assert (project.overlap, project.overlap_max, project.overlap_threshold) == (2, 5, 0.95)
    assert (project.aggregation, project.control_rate) == ("mace", 0.1)


def test_an_adaptive_maximum_below_the_overlap_is_refused_by_name(client_for, owner, project):
    response = client_for(owner).post(
        url(project, "project_settings"), settings_post(project, overlap_max="2")
    )
    assert response.status_code == 400
    assert "a whole number from the judgments per item (3) to 50" in response.content.decode()
    project.refresh_from_db()
    assert project.overlap_max is None


def test_criteria_carry_both_names_and_pages_show_the_readers(client_for, owner, annotator, project):
    client_for(owner).post(
        url(project, "project_settings"),
        settings_post(
            project,
            criteria="clareza; Clarity; Clareza; 1; 5\nadherence; Adherence to the question; Aderência à pergunta",
        ),
    )
    project = Project.objects.get(pk=project.pk)
    assert project.criteria[0] == {
        "key": "clareza",
        "label": "Clarity",
        "label_pt": "Clareza",
        "min": 1,
        "max": 5,
    }
    ItemFactory(project=project)
    client = client_for(annotator)
    response = client.post(
        reverse("annotation:queue_next", args=[project.slug]), follow=True, HTTP_ACCEPT_LANGUAGE="pt-br"
    )
    assert "Clareza" in response.content.decode()


def test_a_criterion_that_judgments_use_cannot_be_removed(client_for, owner, annotator, project):
    ItemFactory(project=project)
    judge(assignment_next(project=project, annotator=annotator))
    response = client_for(owner).post(
        url(project, "project_settings"),
        settings_post(project, criteria="adherence; Adherence; Aderência; 1; 5"),
    )
    assert response.status_code == 400
    assert "fluency" in response.content.decode()
    assert len(Project.objects.get(pk=project.pk).criteria) == 4


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("adherence; Adherence", "line 1"),
        ("Adherence; A; B", "lower-case"),
        ("a; A; B; 5; 1", "min must be below max"),
        ("a; A; B\na; C; D", "comes twice"),
    ],
)
def test_bad_criteria_are_refused_naming_the_line(text, reason):
    from django.core.exceptions import ValidationError

    with pytest.raises(ValidationError) as error:
        criteria_parse(text)
    assert reason in str(error.value)


def test_labels_take_names_in_both_languages():
    labels, names = labels_parse("causal; causal; causal\nnot_causal; not causal; não causal")
    assert labels == ["causal", "not_causal"]
    assert names["not_causal"] == {"en": "not causal", "pt-BR": "não causal"}


def test_guidelines_preview_renders_markdown_safely(client_for, owner, project):
    response = client_for(owner).post(
        url(project, "guidelines_preview"), {"guidelines": "**Atenção**<script>alert(1)</script>"}
    )
    page = response.content.decode()
    assert "<strong>Atenção</strong>" in page
    assert "<script>" not in page


def test_admin_takes_expertise_as_comma_separated_tags(client, project, annotator):
    from annotation.admin import MembershipAdminForm

    admin_user = UserFactory(username="admin", is_staff=True, is_superuser=True)
    membership = Membership.objects.get(user=annotator)
    form = MembershipAdminForm(
        {"user": annotator.pk, "project": project.pk, "role": "annotator", "expertise": "health, economics"},
        instance=membership,
    )
    assert form.is_valid(), form.errors
    assert form.save().expertise == ["health", "economics"]
    assert admin_user.is_staff
