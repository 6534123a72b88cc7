"""The keyboard, finished: the ``?`` panel lists the keys of the item's design and nothing else; *Previous* and
*Next* walk the annotator's own work as far back as they like; a skip can be undone and a written answer
reopened while nobody has judged it (page and API)."""

import pytest
from django.urls import reverse

from annotation.demo import demo_load
from annotation.models import Assignment, Item, Membership, Revision
from annotation.queue import SkipUndoRefused, assignment_next, assignment_skip, assignment_unskip
from tests.annotation.helpers import judge
from tests.factories import ItemFactory, UserFactory, api_token_key

pytestmark = pytest.mark.django_db


def panel(client, project, assignment) -> str:
    page = client.get(reverse("annotation:assignment", args=[project.slug, assignment.pk])).content.decode()
    start = page.index('id="shortcuts"')
    return page[start : page.index("</div>", start)]


def pending(project, n=1):
    return [
        ItemFactory(
            project=project,
            status=Item.Status.PENDING,
            round=0,
            reference_answer="",
            answer_by=Item.AnswerBy.NOBODY,
            question=f"Por que a pergunta aberta {k} acontece?",
        )
        for k in range(n)
    ]


def test_the_panel_lists_the_keys_of_the_default_design(client_for, project, annotator):
    ItemFactory(project=project)
    assignment = assignment_next(project=project, annotator=annotator)
    keys = panel(client_for(annotator), project, assignment)
    assert "<kbd>1–5</kbd>" in keys
    assert "<kbd>a</kbd> accept" in keys
    assert "<kbd>Shift</kbd>+<kbd>1</kbd>–<kbd>3</kbd>" in keys
    assert "<kbd>[</kbd>" in keys


def test_the_explica_panel_lists_only_the_keys_explica_has(client):
    project = demo_load("explica").project
    rater = UserFactory(username="avaliadora")
    Membership.objects.create(user=rater, project=project, role=Membership.Role.ANNOTATOR)
    ItemFactory(project=project)
    assignment = assignment_next(project=project, annotator=rater, kind="review")
    client.force_login(rater)
    keys = panel(client, project, assignment)
    assert "<kbd>1–9</kbd>, <kbd>0</kbd>" in keys, "the 1–10 scale's keys, 0 for 10"
    assert "accept" not in keys, "no vote"
    assert "Shift" not in keys, "no class"


def test_previous_and_next_walk_the_annotators_own_work(client_for, project, annotator):
    for _ in range(3):
        ItemFactory(project=project)
    done = []
    for _ in range(2):
        assignment = assignment_next(project=project, annotator=annotator)
        judge(assignment)
        done.append(assignment)
    current = assignment_next(project=project, annotator=annotator)
    client = client_for(annotator)

    def links(assignment):
        page = client.get(
            reverse("annotation:assignment", args=[project.slug, assignment.pk])
        ).content.decode()
        url = lambda other: reverse("annotation:assignment", args=[project.slug, other.pk])  # noqa: E731
        return {
            "previous": [a.pk for a in done + [current] if f'href="{url(a)}" data-key="["' in page],
            "next": [a.pk for a in done + [current] if f'href="{url(a)}" data-key="]"' in page],
        }

    assert links(current) == {"previous": [done[1].pk], "next": []}
    assert links(done[1]) == {"previous": [done[0].pk], "next": [current.pk]}
    assert links(done[0]) == {"previous": [], "next": [done[1].pk]}


def test_a_skip_can_be_undone_from_the_page(client_for, project, annotator):
    pending(project)
    assignment = assignment_next(project=project, annotator=annotator, kind="answer")
    client = client_for(annotator)
    client.post(
        reverse("annotation:assignment_skip", args=[project.slug, assignment.pk]), {"reason": "Difícil."}
    )
    page = client.get(reverse("annotation:assignment", args=[project.slug, assignment.pk])).content.decode()
    unskip = reverse("annotation:assignment_unskip", args=[project.slug, assignment.pk])
    assert f'action="{unskip}"' in page
    response = client.post(unskip)
    assert response.status_code == 302
    assignment.refresh_from_db()
    assert (assignment.status, assignment.skip_reason) == (Assignment.Status.ACTIVE, "")
    item = Item.objects.get(pk=assignment.item_id)
    assert item.round_assigned == 1


def test_a_skip_stays_when_someone_else_took_the_question(project, annotators):
    pending(project)
    first = assignment_next(project=project, annotator=annotators[0], kind="answer")
    assignment_skip(assignment=first, reason="Difícil.")
    taken = assignment_next(project=project, annotator=annotators[1], kind="answer")
    assert taken.item_id == first.item_id
    with pytest.raises(SkipUndoRefused, match="Someone else"):
        assignment_unskip(assignment=first)


def test_the_api_undoes_a_skip(client, project, annotator):
    pending(project)
    assignment = assignment_next(project=project, annotator=annotator, kind="answer")
    assignment_skip(assignment=assignment, reason="Difícil.")
    headers = {"Authorization": f"Token {api_token_key(annotator)}"}
    url = f"/api/v1/projects/{project.slug}/assignments/{assignment.pk}/unskip/"
    response = client.post(url, headers=headers)
    assert response.status_code == 200
    assert response.json()["status"] == "active"
    assert client.post(url, headers=headers).status_code == 409, "not skipped any more"


def test_a_written_answer_is_reopened_until_someone_judges_it(client_for, project, annotator, annotators):
    pending(project)
    assignment = assignment_next(project=project, annotator=annotator, kind="answer")
    client = client_for(annotator)
    answer_url = reverse("annotation:assignment_answer", args=[project.slug, assignment.pk])
    client.post(answer_url, {"answer": "Porque sim.", "version": 1})
    item = Item.objects.get(pk=assignment.item_id)
    page = client.get(reverse("annotation:assignment", args=[project.slug, assignment.pk])).content.decode()
    assert "Reopen your answer" in page
    response = client.post(answer_url, {"answer": "Porque a causa vem antes.", "version": item.version})
    assert response.status_code == 302
    item.refresh_from_db()
    assert item.reference_answer == "Porque a causa vem antes."
    assert item.revisions.filter(kind=Revision.Kind.ANSWER).count() == 2, "both texts are in the history"

    judge(assignment_next(project=project, annotator=annotators[1], kind="review"))
    page = client.get(reverse("annotation:assignment", args=[project.slug, assignment.pk])).content.decode()
    assert "Reopen your answer" not in page
    response = client.post(answer_url, {"answer": "Outra.", "version": item.version})
    assert response.status_code == 400
    assert "judged this answer already" in response.content.decode()
    item.refresh_from_db()
    assert item.reference_answer == "Porque a causa vem antes."


def test_the_api_reopens_a_written_answer(client, project, annotator):
    pending(project)
    assignment = assignment_next(project=project, annotator=annotator, kind="answer")
    headers = {"Authorization": f"Token {api_token_key(annotator)}"}
    url = f"/api/v1/projects/{project.slug}/assignments/{assignment.pk}/answer/"
    first = client.post(
        url, {"answer": "Porque sim.", "version": 1}, content_type="application/json", headers=headers
    )
    assert first.status_code == 200
    again = client.post(
        url,
        {"answer": "Porque não.", "version": first.json()["version"]},
        content_type="application/json",
        headers=headers,
    )
    assert again.status_code == 200
    assert Item.objects.get(pk=assignment.item_id).reference_answer == "Porque não."
