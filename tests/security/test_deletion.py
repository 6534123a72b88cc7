"""Deleting a project, an item, a job or a run works on both databases, whatever the project holds: jobs and their
model calls, topic runs, releases and benchmark runs (before, the calls' unique constraint and the releases'
protection made it fail, in the admin too)."""

import pytest

from annotation.models import Item, Project
from evaluation.models import EvalRun, Release
from evaluation.runs.services import run_create
from generation.models import GenerationJob, LLMCall
from generation.services import job_create
from tests.evaluation.runs import mc_items, release_of, run_here
from tests.factories import ItemFactory
from tests.fake_llm import Reply
from tests.generation.conftest import run_now
from topics.models import TopicRun

pytestmark = pytest.mark.django_db


@pytest.fixture
def full_project(project, endpoint, fake_llm):
    pending = [
        ItemFactory(project=project, status=Item.Status.PENDING, round=0, reference_answer="")
        for _ in range(3)
    ]
    fake_llm.responder = lambda received: Reply.json({"answer": "Porque a chuva molha a rua."})
    run_now(
        job_create(
            project=project, kind="answer", endpoint=endpoint, item_ids=[i.pk for i in pending], enqueue=False
        )
    )
    TopicRun.objects.create(project=project)
    mc_items(project, 4)
    release = release_of(project)
    fake_llm.responder = lambda received: Reply.json({"answer": "A"})
    run_here(
        run_create(
            project=project, release=release, endpoints=[endpoint], conditions=["zero-shot"], enqueue=False
        )
    )
    assert LLMCall.objects.filter(job__project=project, item__isnull=False).count() >= 3
    return project


def test_deleting_a_project_deletes_everything_it_holds(full_project):
    full_project.delete()
    assert not Project.objects.filter(pk=full_project.pk).exists()
    assert not GenerationJob.objects.exists() and not LLMCall.objects.exists()
    assert not Release.objects.exists() and not EvalRun.objects.exists() and not TopicRun.objects.exists()


def test_deleting_an_item_with_model_calls_works(full_project):
    item = Item.objects.filter(llm_calls__isnull=False).first()
    item_id = item.pk
    item.delete()
    assert not Item.objects.filter(pk=item_id).exists()
    assert not LLMCall.objects.filter(item_id=item_id).exists()


def test_deleting_a_job_or_a_run_works(full_project):
    GenerationJob.objects.filter(project=full_project).first().delete()
    EvalRun.objects.get(project=full_project).delete()
    assert Release.objects.filter(project=full_project).exists()
