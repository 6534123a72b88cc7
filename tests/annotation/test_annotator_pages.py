"""The annotator's pages through HTTP: home, next item, the item page, edits in place, submit, answer, skip."""

import re

import pytest
from django.test import Client
from django.urls import reverse

from annotation.models import Assignment, Item, Judgment, Revision
from annotation.queue import assignment_next
from tests.annotation.helpers import judge, judgment_post
from tests.factories import ItemFactory, OptionFactory

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}


def signed_in(user):
    client = Client()
    client.force_login(user)
    return client


def take_next(client, project):
    response = client.post(reverse("annotation:queue_next", args=[project.slug]))
    assert response.status_code == 302
    return response["Location"]


def part_url(project, item, part):
    return reverse("annotation:item_part", args=[project.slug, item.pk, part])


def test_home_shows_what_waits_and_what_was_done_today(project, annotator):
    ItemFactory(project=project)
    ItemFactory(project=project)
    ItemFactory(project=project, status=Item.Status.PENDING, round=0, reference_answer="")
    judge(assignment_next(project=project, annotator=annotator))

    body = signed_in(annotator).get(reverse("annotation:home")).content.decode()
    waiting = re.search(r'class="num waiting"[^>]*>([^<]*)<', body).group(1)
    assert waiting.split() == ["1", "/", "1"]
    assert "Next item" in body


def test_next_item_opens_the_item_page_with_everything_the_annotator_needs(project, annotator):
    item = ItemFactory(
        project=project,
        question="Por que o gato mia?",
        reference_answer="Porque quer comida.",
        causal_class="associational",
        answer_by=Item.AnswerBy.MODEL,
        answer_provenance={"model": "llama-70b", "template": "answer/class-agnostic v1", "call_id": 7},
    )
    OptionFactory(item=item, text="Quer comida", role="correct", rationale="Segue do contexto", position=0)
    OptionFactory(
        item=item, text="Quer dormir", role="irrelevant", rationale="Sem ligação causal", position=1
    )
    client = signed_in(annotator)

    page = client.get(take_next(client, project))
    body = page.content.decode()

    assert page.status_code == 200
    for text in (
        "Por que o gato mia?",
        "Porque quer comida.",
        "llama-70b",
        "answer/class-agnostic v1",
        "/generation/calls/7/",
        "Quer comida",
        "Irrelevant fact",
        "Sem ligação causal",
        "associational",
        'name="rating_adherence"',
        'name="rating_relevance"',
        'data-key="a"',
        'name="causal_class"',
    ):
        assert text in body, text
    assert "annotation/keys.js" in body and 'id="guidelines"' in body


def test_an_edit_in_place_writes_a_revision(project, annotator):
    item = ItemFactory(project=project, reference_answer="Antes.")
    client = signed_in(annotator)
    take_next(client, project)

    form = client.get(part_url(project, item, "answer") + "?edit=1", **HTMX)
    assert form.status_code == 200 and "Antes." in form.content.decode()
    saved = client.post(part_url(project, item, "answer"), {"value": "Depois.", "version": "1"}, **HTMX)

    assert saved.status_code == 200
    assert (
        "Depois." in saved.content.decode()
        and 'id="item-version" hx-swap-oob="true">2<' in saved.content.decode()
    )
    revision = item.revisions.get(number=2)
    assert (revision.author, revision.kind, revision.changed_fields) == (
        annotator,
        Revision.Kind.EDIT,
        ["reference_answer"],
    )


def test_two_sessions_editing_the_same_answer_see_a_conflict_and_lose_nothing(project, annotators):
    item = ItemFactory(project=project, reference_answer="Original.")
    first, second = signed_in(annotators[0]), signed_in(annotators[1])
    take_next(first, project)
    take_next(second, project)
    # Both open the editor on version 1.
    for client in (first, second):
        assert (
            'name="version" value="1"'
            in client.get(part_url(project, item, "answer") + "?edit=1", **HTMX).content.decode()
        )

    assert (
        first.post(
            part_url(project, item, "answer"), {"value": "Versão da primeira.", "version": "1"}, **HTMX
        ).status_code
        == 200
    )
    conflict = second.post(
        part_url(project, item, "answer"), {"value": "Versão da segunda.", "version": "1"}, **HTMX
    )

    body = conflict.content.decode()
    assert conflict.status_code == 409
    assert "Versão da primeira." in body  # theirs, side by side
    assert "Versão da segunda." in body  # the draft is kept in the form
    assert 'name="version" value="2"' in body
    item.refresh_from_db()
    assert item.reference_answer == "Versão da primeira."

    merged = second.post(
        part_url(project, item, "answer"),
        {"value": "Versão da primeira e da segunda.", "version": "2"},
        **HTMX,
    )
    assert merged.status_code == 200
    item.refresh_from_db()
    assert (item.reference_answer, item.version) == ("Versão da primeira e da segunda.", 3)


def test_editing_another_part_meanwhile_is_no_conflict(project, annotators):
    item = ItemFactory(project=project, question="Pergunta?", reference_answer="Resposta.")
    first, second = signed_in(annotators[0]), signed_in(annotators[1])
    take_next(first, project)
    take_next(second, project)
    first.post(part_url(project, item, "question"), {"value": "Pergunta nova?", "version": "1"}, **HTMX)
    response = second.post(
        part_url(project, item, "answer"), {"value": "Resposta nova.", "version": "1"}, **HTMX
    )
    assert response.status_code == 200
    item.refresh_from_db()
    assert (item.question, item.reference_answer) == ("Pergunta nova?", "Resposta nova.")


def test_an_empty_question_is_refused_and_the_editor_stays_open(project, annotator):
    item = ItemFactory(project=project)
    client = signed_in(annotator)
    take_next(client, project)
    response = client.post(part_url(project, item, "question"), {"value": "  ", "version": "1"}, **HTMX)
    assert response.status_code == 422 and "cannot be empty" in response.content.decode()
    assert item.revisions.count() == 0


def test_options_are_edited_in_place(project, annotator):
    item = ItemFactory(project=project)
    OptionFactory(item=item, text="Certa", role="correct", position=0)
    OptionFactory(item=item, text="Errada", role="unfounded", position=1)
    client = signed_in(annotator)
    take_next(client, project)
    data = {
        "version": "1",
        "option-0-text": "Certa",
        "option-0-role": "correct",
        "option-0-rationale": "",
        "option-1-text": "Inversa",
        "option-1-role": "reversal",
        "option-1-rationale": "Troca causa e efeito",
    }
    response = client.post(part_url(project, item, "options"), data, **HTMX)
    assert response.status_code == 200 and "Inversa" in response.content.decode()
    assert list(item.options.values_list("text", "role")) == [("Certa", "correct"), ("Inversa", "reversal")]


def test_submitting_lands_on_the_next_item(project, annotator):
    first_item = ItemFactory(project=project)
    second_item = ItemFactory(project=project)
    client = signed_in(annotator)
    first_page = take_next(client, project)
    assignment_id = int(first_page.rstrip("/").rsplit("/", 1)[1])

    response = client.post(
        reverse("annotation:assignment_judge", args=[project.slug, assignment_id]),
        judgment_post(project, rating=5, comment="Clara."),
    )

    assert response.status_code == 302
    following = Assignment.objects.get(annotator=annotator, status=Assignment.Status.ACTIVE)
    assert response["Location"] == reverse("annotation:assignment", args=[project.slug, following.pk])
    assert following.item_id == second_item.pk
    judgment = Judgment.objects.get(item=first_item)
    assert (judgment.vote, judgment.comment, judgment.ratings["fluency"]) == ("accept", "Clara.", 5)


def test_a_judgment_with_errors_keeps_everything_typed(project, annotator):
    ItemFactory(project=project)
    client = signed_in(annotator)
    assignment_id = int(take_next(client, project).rstrip("/").rsplit("/", 1)[1])
    data = judgment_post(project, rating=2, vote="", comment="Um comentário longo que não pode se perder.")

    response = client.post(reverse("annotation:assignment_judge", args=[project.slug, assignment_id]), data)

    body = response.content.decode()
    assert response.status_code == 400
    assert "Um comentário longo que não pode se perder." in body
    assert body.count('value="2" checked') == len(project.criteria)
    assert not Judgment.objects.exists()


def test_when_nothing_is_left_the_annotator_is_told_so(project, annotator):
    response = signed_in(annotator).post(reverse("annotation:queue_next", args=[project.slug]), follow=True)
    assert "Nothing waits for you" in response.content.decode()


def test_a_natural_question_is_answered_on_its_page(project, annotator):
    question = ItemFactory(
        project=project,
        status=Item.Status.PENDING,
        round=0,
        reference_answer="",
        question="Por que meu cachorro late à noite?",
    )
    client = signed_in(annotator)
    page_url = take_next(client, project)
    page = client.get(page_url).content.decode()
    assert "Write the answer" in page and "Skip as too hard" in page and 'id="judgment-form"' not in page
    assignment_id = int(page_url.rstrip("/").rsplit("/", 1)[1])

    response = client.post(
        reverse("annotation:assignment_answer", args=[project.slug, assignment_id]),
        {"answer": "Porque ouve ruídos que nós não ouvimos.", "version": "1"},
    )

    assert response.status_code == 302
    question.refresh_from_db()
    assert (question.reference_answer, question.status, question.round) == (
        "Porque ouve ruídos que nós não ouvimos.",
        Item.Status.IN_REVIEW,
        1,
    )


def test_a_question_is_skipped_with_a_reason(project, annotator):
    ItemFactory(project=project, status=Item.Status.PENDING, round=0, reference_answer="")
    client = signed_in(annotator)
    assignment_id = int(take_next(client, project).rstrip("/").rsplit("/", 1)[1])
    url = reverse("annotation:assignment_skip", args=[project.slug, assignment_id])

    refused = client.post(url, {"reason": ""})
    assert refused.status_code == 400 and "Say why you skip" in refused.content.decode()
    assert client.post(url, {"reason": "Exige conhecimento de direito."}).status_code == 302
    assert Assignment.objects.get(pk=assignment_id).skip_reason == "Exige conhecimento de direito."


def test_the_guidelines_are_one_request_away_and_rendered_safely(project, annotator):
    project.guidelines = "# Regras\n\n- **Aceitar** quando tudo ≥ 4\n\n<script>alert('x')</script>"
    project.save()
    response = signed_in(annotator).get(reverse("annotation:guidelines", args=[project.slug]), **HTMX)
    body = response.content.decode()
    assert "<h1>Regras</h1>" in body and "<strong>Aceitar</strong>" in body
    assert "<script>alert" not in body


def test_a_submitted_item_shows_only_the_annotators_own_judgment(project, annotator):
    ItemFactory(project=project)
    assignment = assignment_next(project=project, annotator=annotator)
    judge(assignment, comment="Meu comentário.", vote="reject")
    body = (
        signed_in(annotator).get(reverse("annotation:assignment", args=[project.slug, assignment.pk])).content
    )
    assert "You submitted this item." in body.decode() and "Meu comentário." in body.decode()


def test_the_item_page_speaks_portuguese_on_request(project, annotator):
    ItemFactory(project=project)
    client = signed_in(annotator)
    client.post(reverse("set_language"), {"language": "pt-br", "next": "/"})
    body = client.get(take_next(client, project)).content.decode()
    assert "Sua avaliação" in body and "Enviar" in body and "Diretrizes" in body and "associacional" in body


def test_home_counts_every_member_of_a_project_not_only_the_viewer(project, annotator):
    body = signed_in(annotator).get(reverse("annotation:home")).content.decode()
    members = re.findall(r'<td class="num">(\d+)</td>\s*<td class="num waiting"', body)
    assert members == ["5"]  # owner, curator and three annotators
