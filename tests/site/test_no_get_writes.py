"""No page writes on GET: every page of the demo projects (and of their work: an import, a job, a topic run, a
release, a benchmark run) is read by an owner and by an annotator while every INSERT, UPDATE and DELETE is
counted (sign-in bookkeeping aside: the session, last_login, axes). A write belongs to a POST, a migration or
start-up, never to reading a page."""

import re
from datetime import timedelta

import pytest
from django.db import connection
from django.test import Client
from django.urls import NoReverseMatch, reverse
from django.utils import timezone

from annotation.demo import demo_load_all
from annotation.models import Assignment, ImportBatch, ItemGroup, Membership, Project
from annotation.queue import assignment_next
from evaluation.models import EvalRun, Release
from generation.models import GenerationJob, LLMCall, ModelEndpoint, PromptTemplate
from tests.security.test_permission_matrix import url_patterns
from topics.models import Topic, TopicRun

pytestmark = pytest.mark.django_db

WRITE = re.compile(r"^\s*(INSERT|UPDATE|DELETE|REPLACE)\b", re.IGNORECASE)
# Signing in writes these, whichever page comes first; they are not the page's writes.
BOOKKEEPING = re.compile(r'"?(django_session|axes_\w+)"?|"?auth_user"?\s+SET\s+"?last_login', re.IGNORECASE)


class WriteCounter:
    def __init__(self):
        self.writes = []

    def __call__(self, execute, sql, params, many, context):
        if WRITE.match(sql) and not BOOKKEEPING.search(sql):
            self.writes.append(sql)
        return execute(sql, params, many, context)


def _work_of(project: Project, owner) -> None:
    """One of each kind of background work, so their pages have something to show."""
    from evaluation.services import release_cut

    endpoint = ModelEndpoint.objects.create(
        project=project, name="demo model", base_url="http://127.0.0.1:9/v1", model="demo"
    )
    template = PromptTemplate.objects.filter(kind="answer").first() or PromptTemplate.objects.first()
    GenerationJob.objects.create(
        project=project, kind="answer", endpoint=endpoint, template=template, created_by=owner
    )
    TopicRun.objects.create(project=project, created_by=owner)
    ImportBatch.objects.create(project=project, filename="demo.csv", created_by=owner)
    if project.items.filter(status="approved").exists():
        release = release_cut(project=project, user=owner)
        EvalRun.objects.create(
            project=project, release=release, answer_format=project.answer_format, created_by=owner
        )


def _held_with_little_time_left(project: Project) -> None:
    """annotator1 holds an item whose lease is almost gone (reading its page must not renew it)."""
    annotator = project.memberships.get(user__username="annotator1").user
    assignment = assignment_next(project=project, annotator=annotator)
    if assignment is not None:
        Assignment.objects.filter(pk=assignment.pk).update(expires_at=timezone.now() + timedelta(minutes=1))


def _values(project: Project, user) -> dict:
    """A value for each URL parameter, taken from the project's rows (None: the project has none)."""
    first = lambda queryset: queryset.values_list("pk", flat=True).first()  # noqa: E731
    release = Release.objects.filter(project=project).first()
    return {
        "slug": project.slug,
        "item_id": first(project.items.order_by("pk")),
        "assignment_id": first(
            Assignment.objects.filter(item__project=project, annotator=user, status="active")
        )
        or first(Assignment.objects.filter(item__project=project, annotator=user)),
        "batch_id": first(ImportBatch.objects.filter(project=project)),
        "job_id": first(GenerationJob.objects.filter(project=project)),
        "call_id": first(LLMCall.objects.filter(job__project=project)),
        "endpoint_id": first(ModelEndpoint.objects.filter(project=project)),
        "topic_id": first(Topic.objects.filter(project=project)),
        "membership_id": first(Membership.objects.filter(project=project)),
        "user_id": user.pk,
        "group_id": first(ItemGroup.objects.filter(project=project)),
        "version": release.version if release else None,
        "split": "test",
        "part": "question",
        "kind": "questions",
        "table": "overall",
    }


def _run_ids(name: str, project: Project):
    if name.startswith("topics:"):
        return TopicRun.objects.filter(project=project).values_list("pk", flat=True).first()
    return EvalRun.objects.filter(project=project).values_list("pk", flat=True).first()


def _urls(project: Project, user) -> list[str]:
    values = _values(project, user)
    urls = []
    for name, pattern in url_patterns():
        converters = set(pattern.pattern.converters)
        if "slug" not in converters and converters:
            if name == "generation:call_detail" and values["call_id"]:
                urls.append(reverse(name, kwargs={"call_id": values["call_id"]}))
            continue
        kwargs = {key: values.get(key) for key in converters}
        if "run_id" in converters:
            kwargs["run_id"] = _run_ids(name, project)
        if any(value is None for value in kwargs.values()):
            continue
        if name.startswith("api-") and "version" in kwargs:
            kwargs["version"] = f"v{kwargs['version']}"
        try:
            urls.append(reverse(name, kwargs=kwargs))
        except NoReverseMatch:
            continue
    return sorted(set(urls))


def test_no_page_of_the_demo_writes_on_get(settings):
    # A model configured in the environment since start-up stored it: pages show what is stored, and write nothing.
    settings.LLM_BASE_URL, settings.LLM_MODEL = "http://127.0.0.1:9/v1", "configured-later"
    results = demo_load_all()
    owner = Project.objects.get(slug=results[0].project.slug).memberships.get(role="owner").user
    for result in results:
        _work_of(result.project, owner)
        _held_with_little_time_left(result.project)
    writes, read = {}, 0
    for result in results:
        project = result.project
        for membership in project.memberships.filter(user__username__in=["admin", "annotator1"]):
            client = Client()
            client.force_login(membership.user)
            for url in _urls(project, membership.user):
                counter = WriteCounter()
                with connection.execute_wrapper(counter):
                    response = client.get(url)
                if response.status_code == 405:
                    continue
                read += 1
                assert response.status_code < 500, url
                if counter.writes:
                    writes[f"{membership.user.username} GET {url}"] = counter.writes
    assert read > 200, read  # every design's pages, for two roles
    assert writes == {}, "pages that write on GET"


def test_no_template_comment_leaks_into_a_page(client, annotator):
    """``{# #}`` comments are one line only; a longer one is printed on every page."""
    client.force_login(annotator)
    body = client.get(reverse("annotation:home")).content.decode()
    assert "{#" not in body and "#}" not in body
