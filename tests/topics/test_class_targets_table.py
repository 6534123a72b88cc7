"""Class-balance targets live in one place, a table of topics × classes on the class balance page, saved at once;
the settings page points there instead of holding a second copy."""

import pytest
from django.urls import reverse

from topics.models import Topic

pytestmark = pytest.mark.django_db


def test_the_targets_read_as_a_table_of_topics_by_classes(project, client_for, curator):
    Topic.objects.create(project=project, label="Educação", selected=True)
    Topic.objects.create(project=project, label="Não escolhido", selected=False)
    html = client_for(curator).get(reverse("topics:balance", args=[project.slug])).content.decode()
    table = html[html.index('class="table targets-table"') :]
    table = table[: table.index("</table>")]
    assert table.count('<th scope="col"') == 1 + len(project.label_set), "a column per class"
    assert table.count('<th scope="row"') == 2, "the whole project, then each selected topic"
    assert "Educação" in table
    assert 'aria-label="Target of “counterfactual” in Educação"' in table
    assert html.count('id="targets-form"') == 1, "one form, one Save"


def test_the_whole_table_is_saved_at_once(project, client_for, curator):
    health = Topic.objects.create(project=project, label="Saúde", selected=True)
    school = Topic.objects.create(
        project=project, label="Educação", selected=True, class_targets={"associational": 5}
    )
    data = {
        "target_associational": "100",
        "target_interventional": "",
        "target_counterfactual": "50",
        f"topic{health.pk}-target_associational": "",
        f"topic{health.pk}-target_interventional": "",
        f"topic{health.pk}-target_counterfactual": "20",
        f"topic{school.pk}-target_associational": "",
        f"topic{school.pk}-target_interventional": "",
        f"topic{school.pk}-target_counterfactual": "",
    }
    response = client_for(curator).post(reverse("topics:balance_targets", args=[project.slug]), data)
    assert response.status_code == 302
    project.refresh_from_db()
    health.refresh_from_db()
    school.refresh_from_db()
    assert project.class_targets == {"associational": 100, "counterfactual": 50}
    assert health.class_targets == {"counterfactual": 20}
    assert school.class_targets == {}, "emptied boxes drop the topic's targets"


def test_one_bad_box_saves_nothing_and_names_the_box(project, client_for, curator):
    health = Topic.objects.create(project=project, label="Saúde", selected=True)
    data = {"target_associational": "100", f"topic{health.pk}-target_counterfactual": "-1"}
    response = client_for(curator).post(reverse("topics:balance_targets", args=[project.slug]), data)
    assert response.status_code == 400
    project.refresh_from_db()
    assert project.class_targets == {}, "nothing is saved"
    html = response.content.decode()
    assert 'role="alert"' in html
    assert 'value="-1"' in html, "the box keeps what was typed"


def test_the_settings_page_points_to_the_targets_instead_of_holding_them(project, client_for, owner):
    html = client_for(owner).get(reverse("annotation:project_settings", args=[project.slug])).content.decode()
    assert "target_" not in html
    assert reverse("topics:balance", args=[project.slug]) in html


def test_taking_a_class_out_of_the_set_takes_its_target_with_it(project, owner):
    from annotation.team import project_settings_update

    project.class_targets = {"associational": 10, "counterfactual": 4}
    project.save(update_fields=["class_targets"])
    project_settings_update(
        project=project,
        by=owner,
        label_set=["associational", "interventional"],
    )
    project.refresh_from_db()
    assert project.class_targets == {"associational": 10}
