"""One cancel for every kind of background work that can be stopped: queued ends at once, running is asked to
stop, finished stays as it is."""

import pytest

from core.background import work_cancel, work_claim, work_heartbeat
from evaluation.models import EvalRun
from generation.models import GenerationJob, ModelEndpoint, PromptTemplate
from tests.factories import ProjectFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def job():
    endpoint = ModelEndpoint.objects.create(name="m", base_url="http://127.0.0.1:9/v1", model="m")
    template = PromptTemplate.objects.filter(kind="answer").first()
    return GenerationJob.objects.create(
        project=ProjectFactory(), kind="answer", endpoint=endpoint, template=template
    )


def test_a_queued_row_is_cancelled_at_once_and_no_claim_takes_it(job):
    work_cancel(GenerationJob, pk=job.pk)
    job.refresh_from_db()
    assert (job.status, job.cancel_requested) == ("cancelled", True) and job.finished_at is not None
    assert not work_claim(GenerationJob, pk=job.pk, owner="late")


def test_a_running_row_is_asked_to_stop_and_its_owner_hears_it_on_the_next_heartbeat(job):
    assert work_claim(GenerationJob, pk=job.pk, owner="worker")
    work_cancel(GenerationJob, pk=job.pk)
    job.refresh_from_db()
    assert (job.status, job.cancel_requested, job.finished_at) == ("running", True, None)
    assert not work_heartbeat(GenerationJob, pk=job.pk, owner="worker")


def test_a_finished_row_stays_as_it_is(job):
    GenerationJob.objects.filter(pk=job.pk).update(status="succeeded")
    work_cancel(GenerationJob, pk=job.pk)
    job.refresh_from_db()
    assert (job.status, job.cancel_requested) == ("succeeded", False)


def test_every_cancellable_kind_of_work_has_the_fields_the_cancel_writes():
    for model in (GenerationJob, EvalRun):
        names = {field.name for field in model._meta.get_fields()}
        assert {"status", "cancel_requested", "finished_at"} <= names, model
        assert {"queued", "running", "cancelled"} <= set(model.Status.values), model
