"""Lists cost the same number of queries with 2 rows or 12: no query per row anywhere."""

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotation.judging import item_edit
from annotation.queue import assignment_next
from tests.annotation.helpers import judge
from tests.factories import ItemFactory, OptionFactory

pytestmark = pytest.mark.django_db


def judged_items(project, annotators, n):
    for _ in range(n):
        item = ItemFactory(project=project)
        OptionFactory(item=item, position=0)
        for annotator in annotators:
            assignment = assignment_next(project=project, annotator=annotator)
            item_edit(
                item=assignment.item,
                user=annotator,
                part="answer",
                values=f"Resposta de {annotator.username}.",
                base_version=assignment.item.version,
            )
            judge(assignment, vote="accept" if annotator != annotators[-1] else "reject")


def queries_for(client, url, params=None):
    with CaptureQueriesContext(connection) as captured:
        response = client.get(url, params or {})
    assert response.status_code == 200
    return len(captured.captured_queries)


@pytest.mark.parametrize(
    ("page", "params"),
    [
        ("annotation:review_queue", None),
        ("annotation:review_queue", {"preview": "1", "votes": "majority_accept", "min_mean_rating": "1"}),
        ("annotation:dashboard", None),
        ("annotation:revision_list", None),
        ("annotation:queue", None),
    ],
)
def test_curator_and_annotator_lists_do_not_query_per_row(project, annotators, curator, page, params):
    client = Client()
    client.force_login(curator)
    url = reverse(page, args=[project.slug])
    judged_items(project, annotators, 2)
    few = queries_for(client, url, params)
    judged_items(project, annotators, 10)
    many = queries_for(client, url, params)
    assert many == few


def test_an_items_review_and_history_do_not_query_per_judgment_or_revision(project, annotators, curator):
    client = Client()
    client.force_login(curator)
    item = ItemFactory(project=project)
    assignments = [assignment_next(project=project, annotator=annotator) for annotator in annotators[:1]]
    item_edit(item=item, user=annotators[0], part="answer", values="Uma.", base_version=1)
    judge(assignments[0])
    review_url = reverse("annotation:item_review", args=[project.slug, item.pk])
    history_url = reverse("annotation:item_history", args=[project.slug, item.pk])
    few = (queries_for(client, review_url), queries_for(client, history_url))

    for annotator in annotators[1:]:
        assignment = assignment_next(project=project, annotator=annotator)
        item.refresh_from_db()
        item_edit(
            item=item,
            user=annotator,
            part="answer",
            values=f"De {annotator.username}.",
            base_version=item.version,
        )
        judge(assignment)
    many = (queries_for(client, review_url), queries_for(client, history_url))
    assert many == few


def test_the_home_page_costs_the_same_for_one_project_or_many(project, annotator):
    from annotation.models import Membership
    from tests.factories import ProjectFactory

    client = Client()
    client.force_login(annotator)
    few = queries_for(client, reverse("annotation:home"))
    for number in range(5):
        other = ProjectFactory(slug=f"more-{number}")
        Membership.objects.create(user=annotator, project=other, role=Membership.Role.ANNOTATOR)
        ItemFactory(project=other)
    assert queries_for(client, reverse("annotation:home")) == few
