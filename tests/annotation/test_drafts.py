"""Drafts: what an annotator ticked and typed is kept on the server per assignment and restored on reload."""

import json

import pytest
from django.urls import reverse

from annotation.models import Draft
from annotation.queue import assignment_next
from tests.annotation.helpers import judge
from tests.factories import ItemFactory

pytestmark = pytest.mark.django_db


def draft_url(project, assignment):
    return reverse("annotation:assignment_draft", args=[project.slug, assignment.pk])


def test_a_draft_is_kept_and_shown_again_on_the_item_page(client_for, project, annotator):
    ItemFactory(project=project)
    assignment = assignment_next(project=project, annotator=annotator)
    client = client_for(annotator)
    data = {
        "ratings": {"adherence": "4", "fluency": "2"},
        "vote": "needs_revision",
        "comment": "Falta citar a fonte do boletim.",
        "evil": "<script>",
    }
    response = client.post(draft_url(project, assignment), json.dumps(data), content_type="application/json")
    assert response.status_code == 204
    assert Draft.objects.get(assignment=assignment).data == {
        "ratings": {"adherence": "4", "fluency": "2"},
        "vote": "needs_revision",
        "comment": "Falta citar a fonte do boletim.",
    }, "only the form's own fields are kept"
    page = client.get(reverse("annotation:assignment", args=[project.slug, assignment.pk])).content.decode()
    assert "Falta citar a fonte do boletim." in page
    assert "drafts.js" in page


def test_a_submitted_assignment_keeps_no_draft(client_for, project, annotator):
    ItemFactory(project=project)
    assignment = assignment_next(project=project, annotator=annotator)
    judge(assignment)
    response = client_for(annotator).post(
        draft_url(project, assignment), json.dumps({"comment": "tarde"}), content_type="application/json"
    )
    assert response.status_code == 409
    assert not Draft.objects.exists()


def test_nobody_writes_a_draft_on_someone_elses_assignment(client_for, project, annotators):
    ItemFactory(project=project)
    assignment = assignment_next(project=project, annotator=annotators[0])
    response = client_for(annotators[1]).post(
        draft_url(project, assignment), "{}", content_type="application/json"
    )
    assert response.status_code == 404


def test_a_damaged_draft_is_refused_without_an_error_page(client_for, project, annotator):
    ItemFactory(project=project)
    assignment = assignment_next(project=project, annotator=annotator)
    client = client_for(annotator)
    assert (
        client.post(draft_url(project, assignment), "{not json", content_type="application/json").status_code
        == 400
    )
    assert (
        client.post(draft_url(project, assignment), "[1, 2]", content_type="application/json").status_code
        == 400
    )
