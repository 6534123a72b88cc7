"""``manage.py topics``: a run in the command's own process, with its topics printed."""

import json
from collections import Counter

import pytest
from django.core.management import CommandError, call_command

from topics.models import TopicRun

from .topic_data import create_items, themed_questions

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_command_runs_the_topics_here_and_prints_them(project, settings, fake_llm, capsys):
    settings.TOPIC_EMBEDDINGS, settings.EMBEDDING_MODEL, settings.EMBEDDING_BASE_URL = (
        "endpoint",
        "e",
        fake_llm.base_url,
    )
    create_items(project, themed_questions(20))

    call_command("topics", "--project", project.slug, "--min-cluster-size", "6", "--here", "--json")

    result = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert result["status"] == "succeeded" and result["topics"] == 3 and result["embedded"] == 60
    assert TopicRun.objects.get().status == TopicRun.Status.SUCCEEDED


def test_the_command_names_what_is_wrong(project):
    with pytest.raises(CommandError, match="(?i)no project with slug 'nope'"):
        call_command("topics", "--project", "nope", "--here")
    with pytest.raises(CommandError, match="no imported questions"):
        call_command("topics", "--project", project.slug, "--here")
    with pytest.raises(CommandError, match="min_cluster_size"):
        create_items(project, themed_questions(2))
        call_command("topics", "--project", project.slug, "--min-cluster-size", "1", "--here")


def test_a_second_run_is_a_proposal_unless_the_command_is_told_to_apply_it(
    project, settings, fake_llm, capsys
):
    from topics.models import Topic

    settings.TOPIC_EMBEDDINGS, settings.EMBEDDING_MODEL, settings.EMBEDDING_BASE_URL = (
        "endpoint",
        "e",
        fake_llm.base_url,
    )
    create_items(project, themed_questions(20))
    call_command("topics", "--project", project.slug, "--min-cluster-size", "6", "--here", "--json")
    Topic.objects.filter(project=project, is_residual=False).update(selected=True)
    before = sorted(Topic.objects.filter(project=project).values_list("pk", "size", "cluster"))
    capsys.readouterr()

    call_command(
        "topics",
        "--project",
        project.slug,
        "--min-cluster-size",
        "8",
        "--dimensions",
        "5",
        "--here",
        "--json",
    )

    proposal = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert proposal["status"] == "succeeded" and proposal["applied"] is False
    assert proposal["clustering"]["min_cluster_size"] == 8
    assert sorted(Topic.objects.filter(project=project).values_list("pk", "size", "cluster")) == before

    call_command(
        "topics",
        "--project",
        project.slug,
        "--min-cluster-size",
        "8",
        "--dimensions",
        "5",
        "--here",
        "--json",
        "--apply",
    )

    applied = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert applied["applied"] is True
    from topics.run import proposal_of

    run = TopicRun.objects.get(pk=applied["run"])
    assert run.applied_at is not None
    sizes = Counter(proposal_of(run)[0].values())
    assert sorted(Topic.objects.filter(project=project).values_list("cluster", "size")) == sorted(
        sizes.items()
    )
    assert Topic.objects.filter(project=project, selected=True).exists(), "the selection carried over"
