"""*Previous*: an annotator changes a submitted judgment while its round is open; the earlier version is kept
and agreement reads the latest."""

import pytest
from django.urls import reverse

from annotation.models import Item, Judgment, JudgmentVersion
from annotation.queue import assignment_next
from annotation.services import item_close
from tests.annotation.helpers import judge, judgment_post
from tests.factories import ItemFactory

pytestmark = pytest.mark.django_db


def change_url(project, assignment):
    return reverse("annotation:assignment_change", args=[project.slug, assignment.pk])


def test_previous_leads_to_the_last_judgment_which_can_be_changed(client_for, project, annotator):
    ItemFactory(project=project)
    assignment = assignment_next(project=project, annotator=annotator)
    judge(assignment, rating=4, vote="accept")
    client = client_for(annotator)
    response = client.get(reverse("annotation:judgment_previous", args=[project.slug]))
    assert response["Location"] == reverse("annotation:assignment", args=[project.slug, assignment.pk])
    page = client.get(response["Location"]).content.decode()
    assert "Change this judgment" in page
    response = client.post(
        change_url(project, assignment),
        judgment_post(project, rating=2, vote="reject", comment="Reli: o mecanismo está errado."),
    )
    assert response.status_code == 302
    judgment = Judgment.objects.get(assignment=assignment)
    assert (judgment.vote, judgment.ratings["adherence"], judgment.changed_at is not None) == (
        "reject",
        2,
        True,
    )
    earlier = JudgmentVersion.objects.get(judgment=judgment)
    assert (earlier.vote, earlier.ratings["adherence"]) == ("accept", 4), "the earlier version is kept"


def test_agreement_and_disagreement_read_the_latest_version(project, annotators):
    project.overlap = 2
    project.save()
    item = ItemFactory(project=project)
    first = judge(assignment_next(project=project, annotator=annotators[0]), vote="accept")
    judge(
        assignment_next(project=project, annotator=annotators[1]),
        vote="reject",
        comment="Não explica a causa.",
    )
    item.refresh_from_db()
    split = item.round_disagreement
    from annotation.judging import judgment_change

    judgment_change(
        judgment=first,
        ratings={key: 4 for key in project.criterion_keys},
        vote="reject",
        causal_class="associational",
        comment="Concordo, não explica.",
    )
    item.refresh_from_db()
    assert item.round_disagreement < split, "the round's disagreement is recomputed from the latest versions"


def test_a_decided_round_cannot_be_changed(client_for, project, annotator, curator):
    project.overlap = 1
    project.save()
    ItemFactory(project=project)
    assignment = assignment_next(project=project, annotator=annotator)
    judge(assignment)
    item_close(item=Item.objects.get(), curator=curator, decision="approve")
    client = client_for(annotator)
    page = client.get(reverse("annotation:assignment", args=[project.slug, assignment.pk])).content.decode()
    assert "Change this judgment" not in page
    response = client.post(change_url(project, assignment), judgment_post(project, vote="reject"))
    assert response.status_code == 400
    assert Judgment.objects.get().vote == "accept"
    assert not JudgmentVersion.objects.exists()


def test_nobody_changes_someone_elses_judgment(client_for, project, annotators):
    ItemFactory(project=project)
    assignment = assignment_next(project=project, annotator=annotators[0])
    judge(assignment)
    response = client_for(annotators[1]).post(
        change_url(project, assignment), judgment_post(project, vote="reject")
    )
    assert response.status_code == 404
