"""Invariants that matter live in the database, not only in Python."""

import pytest
from django.db import IntegrityError, transaction

from annotation.models import Assignment, Item, Judgment, Membership, Option
from evaluation.models import Release
from generation.models import GenerationJob, LLMCall, ModelEndpoint, PromptTemplate
from tests.factories import ItemFactory, OptionFactory

pytestmark = pytest.mark.django_db


def violates(create) -> bool:
    try:
        with transaction.atomic():
            create()
    except IntegrityError:
        return True
    return False


def test_one_judgment_per_annotator_per_item_per_round(project, annotator):
    item = ItemFactory(project=project)
    Judgment.objects.create(item=item, annotator=annotator, round=1, vote="accept")
    assert violates(lambda: Judgment.objects.create(item=item, annotator=annotator, round=1, vote="reject"))
    Judgment.objects.create(item=item, annotator=annotator, round=2, vote="reject")  # a new round is fine


def test_one_assignment_per_annotator_per_item_per_round(project, annotator):
    item = ItemFactory(project=project)
    Assignment.objects.create(item=item, annotator=annotator, round=1)
    assert violates(lambda: Assignment.objects.create(item=item, annotator=annotator, round=1))


def test_external_ids_are_unique_within_a_project_but_may_be_blank(project):
    ItemFactory(project=project, external_id="q-1")
    assert violates(lambda: ItemFactory(project=project, external_id="q-1"))
    ItemFactory(project=project, external_id="")
    ItemFactory(project=project, external_id="")


def test_option_positions_are_unique_within_an_item(project):
    item = ItemFactory(project=project)
    OptionFactory(item=item, position=0)
    assert violates(lambda: Option.objects.create(item=item, text="B", position=0))


def test_one_membership_per_user_and_project(project, annotator):
    assert violates(lambda: Membership.objects.create(user=annotator, project=project, role="curator"))


def test_item_version_starts_at_one_and_cannot_be_zero(project):
    item = ItemFactory(project=project)
    assert item.version == 1
    assert violates(lambda: Item.objects.filter(pk=item.pk).update(version=0))


def test_release_versions_are_unique_per_project(project):
    Release.objects.create(project=project, version=1)
    assert violates(lambda: Release.objects.create(project=project, version=1))


def make_job(project):
    endpoint = ModelEndpoint.objects.create(name="fake", base_url="http://127.0.0.1:9/v1", model="m")
    # Not a shipped template name: `migrate` loads those (answer/class-agnostic v1 among them).
    template = PromptTemplate.objects.create(kind="answer", name="constraint-test", user="{question}")
    return GenerationJob.objects.create(project=project, kind="answer", endpoint=endpoint, template=template)


def test_an_llm_call_is_unique_per_job_item_and_purpose(project):
    job = make_job(project)
    item = ItemFactory(project=project)
    LLMCall.objects.create(job=job, item=item, purpose="answer")
    assert violates(lambda: LLMCall.objects.create(job=job, item=item, purpose="answer"))
    LLMCall.objects.create(job=job, item=item, purpose="distractors")


def test_calls_without_an_item_are_unique_per_job_and_purpose_too(project):
    job = make_job(project)
    LLMCall.objects.create(job=job, purpose="questions#1")
    assert violates(lambda: LLMCall.objects.create(job=job, purpose="questions#1"))
    LLMCall.objects.create(job=job, purpose="questions#2")
