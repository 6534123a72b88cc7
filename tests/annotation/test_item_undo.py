"""Undo of a saved edit: a revision is undone with one click from the item's history (or the item page's
"Saved. Undo"), and the undo is itself a revision; a later edit of the same part is never thrown away."""

import pytest
from django.urls import reverse

from annotation.judging import item_edit
from annotation.models import Item, Revision
from annotation.services import Author, UndoRefused, item_undo
from tests.factories import ItemFactory, OptionFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def item(project):
    return ItemFactory(project=project, question="A chuva causa trânsito?", context="Numa cidade grande.")


def test_undo_puts_back_what_the_revision_changed_and_is_itself_a_revision(item, curator):
    edited = item_edit(item=item, user=curator, part="question", values="pleta, falta citar.", base_version=1)
    assert edited.question == "pleta, falta citar."
    undone = item_undo(item=edited, number=edited.version, author=Author(user=curator))
    assert undone.question == "A chuva causa trânsito?"
    assert undone.version == edited.version + 1, "the undo is a new version"
    last = Revision.objects.get(item=item, number=undone.version)
    assert last.kind == Revision.Kind.UNDO
    assert last.provenance["undoes"] == edited.version
    assert last.changed_fields == ["question"]
    assert Revision.objects.filter(item=item, number=edited.version).exists(), "nothing is erased"


def test_undo_of_an_undo_brings_the_edit_back(item, curator):
    edited = item_edit(item=item, user=curator, part="context", values="Em São Paulo.", base_version=1)
    undone = item_undo(item=edited, number=edited.version, author=Author(user=curator))
    redone = item_undo(item=undone, number=undone.version, author=Author(user=curator))
    assert redone.context == "Em São Paulo."


def test_undo_leaves_other_parts_changed_later_alone(item, curator):
    first = item_edit(item=item, user=curator, part="question", values="Nova pergunta?", base_version=1)
    second = item_edit(
        item=first, user=curator, part="context", values="Novo contexto.", base_version=first.version
    )
    undone = item_undo(item=second, number=first.version, author=Author(user=curator))
    assert (undone.question, undone.context) == ("A chuva causa trânsito?", "Novo contexto.")


def test_undo_is_refused_when_a_later_revision_changed_the_same_part(item, curator):
    first = item_edit(item=item, user=curator, part="question", values="Primeira?", base_version=1)
    item_edit(item=first, user=curator, part="question", values="Segunda?", base_version=first.version)
    with pytest.raises(UndoRefused, match="undo revision 3 first"):
        item_undo(item=item, number=first.version, author=Author(user=curator))
    assert Item.objects.get(pk=item.pk).question == "Segunda?"


def test_undo_of_the_first_revision_or_a_missing_one_is_refused(item, curator):
    edited = item_edit(item=item, user=curator, part="question", values="Outra?", base_version=1)
    with pytest.raises(UndoRefused, match="how the item started"):
        item_undo(item=edited, number=1, author=Author(user=curator))
    with pytest.raises(UndoRefused, match="no revision 9"):
        item_undo(item=edited, number=9, author=Author(user=curator))


def test_undo_puts_back_the_options(project, curator):
    item = ItemFactory(project=project)
    OptionFactory(item=item, text="Certa", role="correct", position=0)
    OptionFactory(item=item, text="Errada", role="irrelevant", position=1)
    edited = item_edit(
        item=item,
        user=curator,
        part="options",
        values=[{"text": "Trocada", "role": "correct", "rationale": ""}],
        base_version=1,
    )
    assert [o.text for o in edited.options.order_by("position")] == ["Trocada"]
    item_undo(item=edited, number=edited.version, author=Author(user=curator))
    assert [o.text for o in item.options.order_by("position")] == ["Certa", "Errada"]


def test_the_history_page_offers_undo_and_one_click_undoes(client_for, project, curator, item):
    edited = item_edit(item=item, user=curator, part="question", values="pleta, falta citar.", base_version=1)
    client = client_for(curator)
    history = reverse("annotation:item_history", args=[project.slug, item.pk])
    page = client.get(history).content.decode()
    undo = reverse("annotation:item_undo", args=[project.slug, item.pk, edited.version])
    assert f'action="{undo}"' in page
    response = client.post(undo)
    assert response.status_code == 302
    assert response["Location"] == history
    assert Item.objects.get(pk=item.pk).question == "A chuva causa trânsito?"
    page = client.get(history).content.decode()
    assert f"Undoes revision {edited.version}." in page


def test_saving_an_edit_on_the_item_page_offers_undo_which_restores_the_part(
    client_for, project, curator, item
):
    client = client_for(curator)
    part_url = reverse("annotation:item_part", args=[project.slug, item.pk, "question"])
    saved = client.post(part_url, {"value": "Escrita por engano?", "version": "1"}, HTTP_HX_REQUEST="true")
    assert saved.status_code == 200
    undo = reverse("annotation:item_undo", args=[project.slug, item.pk, 2])
    assert undo in saved.content.decode()
    undone = client.post(undo, {"part": "question"}, HTTP_HX_REQUEST="true")
    assert undone.status_code == 200
    assert "A chuva causa trânsito?" in undone.content.decode()
    assert "Undone." in undone.content.decode()
    assert Item.objects.get(pk=item.pk).question == "A chuva causa trânsito?"


def test_saving_an_unchanged_part_offers_no_undo(client_for, project, curator, item):
    client = client_for(curator)
    part_url = reverse("annotation:item_part", args=[project.slug, item.pk, "question"])
    saved = client.post(part_url, {"value": item.question, "version": "1"}, HTTP_HX_REQUEST="true")
    assert "/undo/" not in saved.content.decode()


def test_a_refused_undo_on_the_item_page_keeps_the_part_and_says_why(client_for, project, curator, item):
    item_edit(item=item, user=curator, part="question", values="Outra?", base_version=1)
    client = client_for(curator)
    undo = reverse("annotation:item_undo", args=[project.slug, item.pk, 1])
    response = client.post(undo, {"part": "question"}, HTTP_HX_REQUEST="true")
    body = response.content.decode()
    assert 'id="part-question"' in body, "the part stays in the page"
    assert "how the item started" in body


def test_an_annotator_without_the_item_cannot_undo(client_for, project, curator, annotator, item):
    edited = item_edit(item=item, user=curator, part="question", values="Outra?", base_version=1)
    response = client_for(annotator).post(
        reverse("annotation:item_undo", args=[project.slug, item.pk, edited.version])
    )
    assert response.status_code in (403, 404)
    assert Item.objects.get(pk=item.pk).question == "Outra?"
