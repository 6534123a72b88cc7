"""The demo gives every role work in every design: items waiting for an annotator, rounds complete waiting for
a curator, and an approved set with a cut release."""

import pytest
from django.contrib.auth import get_user_model

from annotation.demo import _complete_rounds, demo_load_all
from annotation.designs import designs
from annotation.models import Item, Project
from annotation.queue import ANSWER, CHECK, REVIEW, waiting_counts
from evaluation.models import Release

pytestmark = pytest.mark.django_db


@pytest.fixture
def demo():
    return demo_load_all()


def test_every_design_has_a_demo_project_with_work_for_every_role(demo):
    assert {result.project.design for result in demo} == {design.key for design in designs()}
    annotator = get_user_model().objects.get(username="annotator1")
    waiting = waiting_counts(annotator, Project.objects.all())
    for result in demo:
        project = result.project
        work = waiting[project.pk][REVIEW] + waiting[project.pk][ANSWER] + waiting[project.pk].get(CHECK, 0)
        assert work > 0, f"{project.slug}: nothing waits for an annotator"
        assert _complete_rounds(project) > 0, f"{project.slug}: nothing waits for a curator"
        assert Item.objects.filter(project=project, status=Item.Status.APPROVED).exists(), project.slug
        release = Release.objects.get(project=project)
        assert (release.version, release.status) == (1, Release.Status.READY), project.slug


def test_causalbench_questions_waiting_for_their_check_count_on_the_home_page(demo, client):
    project = Project.objects.get(design="causalbench")
    annotator = get_user_model().objects.get(username="annotator1")
    assert waiting_counts(annotator, [project])[project.pk][CHECK] > 0
    client.force_login(annotator)
    page = client.get("/")
    assert page.status_code == 200
    assert "to check" in page.content.decode(), "the home page says how many wait for their check"


def test_loading_the_demo_again_changes_nothing(demo):
    counts = Item.objects.count(), Release.objects.count()
    assert all(not result.created for result in demo_load_all())
    assert (Item.objects.count(), Release.objects.count()) == counts


def test_the_demos_model_written_answers_name_the_scripted_demo_model(demo):
    from annotation.demo import DEMO_MODEL_NAME as DEMO_AUTHOR
    from generation.demo_model import DEMO_MODEL_NAME

    assert DEMO_AUTHOR == DEMO_MODEL_NAME
    by_model = Item.objects.filter(answer_by=Item.AnswerBy.MODEL, project__design="causal_qa_pt")
    assert by_model.exists()
    assert {item.answer_provenance["model"] for item in by_model} == {DEMO_MODEL_NAME}
