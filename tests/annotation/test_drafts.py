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


def test_a_draft_arriving_just_after_the_submit_is_refused_without_a_warning_in_the_log(
    client_for, project, annotator, caplog
):
    import logging

    from core.security import QuietLateDraft

    ItemFactory(project=project)
    assignment = assignment_next(project=project, annotator=annotator)
    judge(assignment)
    with caplog.at_level(logging.WARNING, logger="django.request"):
        response = client_for(annotator).post(
            draft_url(project, assignment), json.dumps({"comment": "tarde"}), content_type="application/json"
        )
    assert response.status_code == 409
    refused = [record for record in caplog.records if getattr(record, "status_code", None) == 409]
    assert refused, "Django reports the refusal to its logger"
    console = [
        handler
        for handler in logging.getLogger().handlers
        if any(isinstance(each, QuietLateDraft) for each in handler.filters)
    ]
    assert console, "the site's console handler carries the filter"
    assert not any(console[0].filter(record) for record in refused), "the console does not print it"
