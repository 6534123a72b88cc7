"""The topics page: who may change what, the run's live progress, rename / merge / move / select,
near-duplicates merged or kept; the queue then serves only the selected topics."""

import pytest
from django.urls import reverse

from annotation import queue
from annotation.models import CurationDecision, Item, Revision
from tests.factories import ItemFactory
from topics.models import NearDuplicate, Topic, TopicRun

from .topic_data import create_items, themed_questions

pytestmark = pytest.mark.django_db


def url(project, name, **kwargs):
    return reverse(f"topics:{name}", kwargs={"slug": project.slug, **kwargs})


@pytest.fixture
def topics(project):
    """Two modelled topics and a residual, with questions in each."""
    school = Topic.objects.create(
        project=project, label="Escola", cluster=0, top_words=["escola", "aluno"], size=3
    )
    pets = Topic.objects.create(project=project, label="Pets", cluster=1, top_words=["gato", "ração"], size=2)
    residual = Topic.objects.create(project=project, label="Residual", cluster=-1, is_residual=True, size=1)
    for n in range(3):
        ItemFactory(
            project=project,
            topic=school,
            question=f"Por que a escola {n} muda o aluno?",
            status=Item.Status.PENDING,
            round=0,
            reference_answer="",
            answer_by="",
        )
    for n in range(2):
        ItemFactory(
            project=project,
            topic=pets,
            question=f"Por que o gato {n} come ração?",
            causal_class="counterfactual",
            status=Item.Status.PENDING,
            round=0,
            reference_answer="",
            answer_by="",
        )
    ItemFactory(
        project=project,
        topic=residual,
        question="Qual a cor do céu amanhã?",
        status=Item.Status.PENDING,
        round=0,
        reference_answer="",
        answer_by="",
    )
    return {"school": school, "pets": pets, "residual": residual}


def changes(project, topics, pair=None):
    """Every POST that changes topics, targets or starts work, with valid data."""
    school, pets = topics["school"], topics["pets"]
    item = school.items.first()
    posts = [
        (
            url(project, "topic_run_start"),
            {"min_cluster_size": 5, "dimensions": 10, "duplicate_threshold": 0.95},
        ),
        (url(project, "topic_rename", topic_id=school.pk), {"label": "Educação"}),
        (url(project, "topics_merge"), {"into": school.pk, "other": pets.pk}),
        (url(project, "topics_select"), {"selected": [school.pk]}),
        (url(project, "item_move", item_id=item.pk), {"topic": pets.pk}),
        (url(project, "balance_targets"), {"target_associational": 10}),
        (
            url(project, "balance_start"),
            {"endpoint": 1, "answer_variant": "class-agnostic", "batch_size": 10, "count_counterfactual": 3},
        ),
    ]
    if pair is not None:
        posts.append((url(project, "near_duplicate_resolve", pair_id=pair.pk), {"keep": "first"}))
    return posts


def test_annotators_and_outsiders_cannot_change_topics_or_start_jobs(
    project, topics, client_for, annotator, outsider
):
    first, second = topics["school"].items.order_by("pk")[:2]
    pair = NearDuplicate.objects.create(project=project, first=first, second=second, similarity=0.97)
    before = list(Topic.objects.order_by("pk").values_list("label", "selected", "size"))

    for path, data in changes(project, topics, pair):
        assert client_for(annotator).post(path, data).status_code == 403, path
        assert client_for(outsider).post(path, data).status_code == 404, path

    assert list(Topic.objects.order_by("pk").values_list("label", "selected", "size")) == before
    assert not TopicRun.objects.exists() and NearDuplicate.objects.get().status == NearDuplicate.Status.OPEN
    assert not project.generation_jobs.exists()
    project.refresh_from_db()
    assert project.class_targets == {}


def test_members_see_the_topics_but_only_curators_get_the_controls(
    project, topics, client_for, annotator, curator, outsider
):
    page = url(project, "topics")
    as_annotator = client_for(annotator).get(page)
    assert as_annotator.status_code == 200
    body = as_annotator.content.decode()
    assert "Escola" in body and "escola, aluno" in body and 'id="topic-run-form"' not in body
    assert client_for(outsider).get(page).status_code == 404

    body = client_for(curator).get(page).content.decode()
    assert 'id="topic-run-form"' in body and 'id="topics-merge-form"' in body
    assert "Por que a escola 0 muda o aluno?" in body  # an example question
    assert client_for(annotator).get(url(project, "balance")).status_code == 403


def test_topic_names_and_questions_are_escaped(project, topics, client_for, curator):
    topics["school"].label = "<script>alert(1)</script>"
    topics["school"].save()
    ItemFactory(project=project, topic=topics["school"], question="<img src=x onerror=alert(2)>")

    body = client_for(curator).get(url(project, "topics")).content.decode()
    detail = (
        client_for(curator).get(url(project, "topic_detail", topic_id=topics["school"].pk)).content.decode()
    )

    for page in (body, detail):
        assert "<script>alert(1)" not in page and "&lt;script&gt;alert(1)" in page
    assert "<img src=x" not in detail and "&lt;img src=x" in detail


def test_a_curator_renames_merges_moves_and_selects(project, topics, client_for, curator):
    client = client_for(curator)
    school, pets, residual = topics["school"], topics["pets"], topics["residual"]

    client.post(url(project, "topic_rename", topic_id=school.pk), {"label": "Educação e carreira"})
    school.refresh_from_db()
    assert school.label == "Educação e carreira"
    refused = client.post(
        url(project, "topic_rename", topic_id=pets.pk), {"label": "Educação e carreira"}, follow=True
    )
    assert "Another topic of this project is called" in refused.content.decode()

    moved = residual.items.get()
    client.post(url(project, "item_move", item_id=moved.pk), {"topic": pets.pk})
    moved.refresh_from_db()
    pets.refresh_from_db()
    residual.refresh_from_db()
    assert moved.topic_id == pets.pk and (pets.size, residual.size) == (3, 0)

    client.post(url(project, "topics_merge"), {"into": school.pk, "other": pets.pk})
    school.refresh_from_db()
    assert not Topic.objects.filter(pk=pets.pk).exists()
    assert school.size == 6 == school.items.count()
    assert school.top_words == ["escola", "aluno", "gato", "ração"]

    client.post(url(project, "topics_select"), {"selected": [school.pk]})
    assert list(Topic.objects.filter(project=project, selected=True)) == [school]


def test_the_queue_serves_only_the_selected_topics(project, topics, client_for, curator, annotator):
    client_for(curator).post(url(project, "topics_select"), {"selected": [topics["pets"].pk]})

    eligible = queue.eligible_items(project, annotator)
    assert set(eligible.values_list("topic_id", flat=True)) == {topics["pets"].pk}
    assignment = queue.assignment_next(project=project, annotator=annotator)
    assert assignment.item.topic_id == topics["pets"].pk


def test_near_duplicates_are_merged_or_kept(project, topics, client_for, curator):
    first, second, third = topics["school"].items.order_by("pk")
    merge = NearDuplicate.objects.create(project=project, first=first, second=second, similarity=0.98)
    keep = NearDuplicate.objects.create(project=project, first=first, second=third, similarity=0.96)
    client = client_for(curator)
    body = client.get(url(project, "topics")).content.decode()
    assert f'id="pair-{merge.pk}"' in body and "0.980" in body

    client.post(url(project, "near_duplicate_resolve", pair_id=merge.pk), {"keep": "first"})
    client.post(url(project, "near_duplicate_resolve", pair_id=keep.pk), {"keep": "both"})

    second.refresh_from_db()
    third.refresh_from_db()
    assert second.status == Item.Status.REJECTED and second.metadata["duplicate_of"] == first.pk
    assert Revision.objects.filter(item=second, note=f"near-duplicate of #{first.pk}").exists()
    decision = CurationDecision.objects.get(item=second)  # closing an item always leaves a decision record
    assert (decision.decision, decision.curator, decision.note) == (
        "reject",
        curator,
        f"near-duplicate of #{first.pk}",
    )
    assert third.status == Item.Status.PENDING
    assert set(NearDuplicate.objects.values_list("status", flat=True)) == {"merged", "kept"}
    assert f'id="pair-{merge.pk}"' not in client.get(url(project, "topics")).content.decode()


def test_a_gold_question_is_never_dropped_as_a_duplicate(project, topics, client_for, curator):
    first, second = topics["school"].items.order_by("pk")[:2]
    Item.objects.filter(pk=second.pk).update(status=Item.Status.APPROVED)
    pair = NearDuplicate.objects.create(project=project, first=first, second=second, similarity=0.98)

    response = client_for(curator).post(
        url(project, "near_duplicate_resolve", pair_id=pair.pk), {"keep": "first"}, follow=True
    )

    assert "is in the gold collection" in response.content.decode()
    assert Item.objects.get(pk=second.pk).status == Item.Status.APPROVED
    assert NearDuplicate.objects.get().status == NearDuplicate.Status.OPEN


def test_starting_a_run_queues_it_and_the_progress_partial_stops_polling_when_done(
    project, client_for, curator, settings, fake_llm, django_capture_on_commit_callbacks
):
    settings.TOPIC_EMBEDDINGS, settings.EMBEDDING_MODEL, settings.EMBEDDING_BASE_URL = (
        "endpoint",
        "e",
        fake_llm.base_url,
    )
    create_items(project, themed_questions(20))
    client = client_for(curator)
    sent = []
    from topics.tasks import run_topic_model

    run_topic_model.delay = sent.append  # the broker is not under test here; the worker test covers it

    try:
        with django_capture_on_commit_callbacks(execute=True):
            response = client.post(
                url(project, "topic_run_start"),
                {
                    "min_cluster_size": 6,
                    "dimensions": 10,
                    "duplicate_threshold": 0.95,
                    "seed_words": "Pets: gato, vacina",
                },
            )
    finally:
        del run_topic_model.delay
    assert response.status_code == 302
    run = TopicRun.objects.get()
    assert sent == [run.pk] and run.params["seed_words"] == {"Pets": ["gato", "vacina"]}
    polling = client.get(url(project, "topic_run_progress", run_id=run.pk), HTTP_HX_REQUEST="true")
    assert polling.status_code == 200 and "hx-trigger" in polling.content.decode()

    from topics.run import topic_run_claim, topic_run_execute

    topic_run_claim(run_id=run.pk)
    topic_run_execute(run_id=run.pk)

    done = client.get(url(project, "topic_run_progress", run_id=run.pk), HTTP_HX_REQUEST="true")
    assert done.status_code == 286 and "hx-trigger" not in done.content.decode()
    page = client.get(url(project, "topics")).content.decode()
    assert "<svg" in page and page.count("<circle") == 60
    assert "Pets" in page and "seed words:" in page


def test_bad_run_settings_are_shown_on_the_form(project, client_for, curator):
    create_items(project, themed_questions(2))
    response = client_for(curator).post(
        url(project, "topic_run_start"),
        {"min_cluster_size": 1, "dimensions": 10, "duplicate_threshold": 0.95, "seed_words": "Education:"},
    )
    assert response.status_code == 400
    body = response.content.decode()
    assert "line 1: no seed words after the label" in body
    assert not TopicRun.objects.exists()
