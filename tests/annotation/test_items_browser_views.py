"""The items page as a data manager: filters folded away and shown as removable chips, checkbox groups instead of
list boxes, a confirmation that lists the items it takes, and saved views per person, shareable in the project."""

import pytest
from django.core.exceptions import ValidationError
from django.http import QueryDict
from django.urls import reverse

from annotation.models import Item, Membership, SavedItemView
from annotation.saved_views import saved_view_delete, saved_view_save, saved_views_for
from tests.factories import ItemFactory, UserFactory

pytestmark = pytest.mark.django_db


def url(project, name="items", *args):
    return reverse(f"annotation:{name}", args=[project.slug, *args])


@pytest.fixture
def many(project):
    return [ItemFactory(project=project, question=f"Por que o caso {n} aconteceu?") for n in range(25)]


def test_status_class_and_topic_are_checkbox_groups_not_list_boxes(client_for, curator, project, many):
    page = client_for(curator).get(url(project)).content.decode()
    assert "multiple" not in page, "no Ctrl-click list box is left"
    assert 'type="checkbox" name="status" value="approved"' in page, "Approved is one click away"
    assert 'type="checkbox" name="causal_class" value="counterfactual"' in page


def test_the_filter_panel_is_folded_and_the_filters_applied_are_chips(client_for, curator, project, many):
    page = client_for(curator).get(url(project), {"status": ["in_review", "approved"], "q": "caso"})
    html = page.content.decode()
    assert '<details class="filter-panel" id="filter-panel">' in html, "folded once a filter is applied"
    assert 'aria-label="Remove the filter Status: In review"' in html
    assert 'aria-label="Remove the filter Search: caso"' in html
    chips = page.context["chips"]
    status_chip = next(chip for chip in chips if chip.value == "In review")
    assert QueryDict(status_chip.without).getlist("status") == ["approved"], "removing one keeps the other"
    assert QueryDict(status_chip.without)["q"] == "caso"


def test_a_filter_that_cannot_be_used_opens_the_panel(client_for, curator, project):
    response = client_for(curator).get(url(project), {"round": "abc"})
    assert response.status_code == 400
    assert '<details class="filter-panel" id="filter-panel" open>' in response.content.decode()


def test_the_page_offers_to_choose_every_item_on_it_and_all_that_match(client_for, curator, project, many):
    html = client_for(curator).get(url(project)).content.decode()
    assert 'id="choose-page"' in html
    assert "Choose all 25 items that match" not in html, "one page holds them all: nothing more to choose"
    ItemFactory.create_batch(30, project=project)
    html = client_for(curator).get(url(project)).content.decode()
    assert "Choose all 55 items that match" in html


def test_the_bulk_confirmation_lists_the_first_twenty_items_and_counts_the_rest(
    client_for, curator, project, many
):
    response = client_for(curator).post(
        url(project, "items_bulk"), {"action": "approve", "scope": "filter", "status": "in_review"}
    )
    html = response.content.decode()
    assert response.status_code == 200
    listed = response.context["preview"].sample
    assert [item.pk for item in listed] == [item.pk for item in many[:20]]
    assert many[0].question in html
    assert many[20].question not in html
    assert "…and 5 more items." in html


def test_a_curator_saves_a_view_and_opens_it_from_the_page(client_for, curator, project, many):
    client = client_for(curator)
    query = "status=in_review&sort=-updated_at&cols=question&cols=status&cursor=abc"
    response = client.post(url(project, "items_view_save"), {"name": "Em revisão", "view_query": query})
    view = SavedItemView.objects.get(owner=curator, name="Em revisão")
    assert QueryDict(view.query).getlist("cols") == ["question", "status"]
    assert "cursor" not in view.query, "a view keeps the filter, not the page it was on"
    assert response.status_code == 302
    assert response["Location"].endswith(f"?{view.query}")
    html = client.get(url(project)).content.decode()
    assert f'href="{url(project)}?{view.query.replace("&", "&amp;")}">Em revisão</a>' in html


def test_a_shared_view_is_offered_to_the_other_curators_and_a_private_one_is_not(project, curator, owner):
    params = QueryDict("status=approved")
    saved_view_save(project=project, user=curator, name="Aprovados", params=params, shared=True)
    saved_view_save(project=project, user=curator, name="Só meu", params=params, shared=False)
    assert [view.name for view in saved_views_for(project, owner)] == ["Aprovados"]
    assert [view.name for view in saved_views_for(project, curator)] == ["Aprovados", "Só meu"]


def test_saving_under_the_same_name_replaces_the_view(project, curator):
    saved_view_save(
        project=project, user=curator, name="Fila", params=QueryDict("status=approved"), shared=False
    )
    saved_view_save(
        project=project, user=curator, name="Fila", params=QueryDict("status=pending"), shared=True
    )
    view = SavedItemView.objects.get(owner=curator, name="Fila")
    assert view.query == "status=pending"
    assert view.shared


def test_a_view_with_a_bad_filter_or_no_name_is_refused_with_the_reason(client_for, project, curator):
    with pytest.raises(ValidationError) as refused:
        saved_view_save(project=project, user=curator, name="x", params=QueryDict("round=abc"), shared=False)
    assert "round" in str(refused.value)
    client = client_for(curator)
    response = client.post(
        url(project, "items_view_save"), {"name": " ", "view_query": "status=approved"}, follow=True
    )
    assert "The view was not saved: Give the view a name." in response.content.decode()
    assert not SavedItemView.objects.exists()


def test_only_the_owner_of_a_view_deletes_it(client_for, project, curator, owner):
    view = saved_view_save(project=project, user=curator, name="Fila", params=QueryDict(""), shared=True)
    with pytest.raises(ValidationError):
        saved_view_delete(project=project, user=owner, view_id=view.pk)
    response = client_for(owner).post(url(project, "items_view_delete", view.pk), follow=True)
    assert "Nothing deleted" in response.content.decode()
    assert SavedItemView.objects.filter(pk=view.pk).exists()
    client_for(curator).post(url(project, "items_view_delete", view.pk))
    assert not SavedItemView.objects.filter(pk=view.pk).exists()


def test_annotators_and_outsiders_cannot_save_views(client_for, project, annotator, outsider):
    data = {"name": "x", "view_query": ""}
    assert client_for(annotator).post(url(project, "items_view_save"), data).status_code == 403
    assert client_for(outsider).post(url(project, "items_view_save"), data).status_code == 404
    assert not SavedItemView.objects.exists()


def test_views_stay_in_their_project(project, curator):
    other = Membership.objects.create(
        user=UserFactory(), project=ItemFactory().project, role=Membership.Role.CURATOR
    ).project
    saved_view_save(project=other, user=curator, name="Lá", params=QueryDict(""), shared=True)
    assert list(saved_views_for(project, curator)) == []
    assert Item.objects.filter(project=project).count() == 0
