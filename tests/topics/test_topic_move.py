"""Topics moved from annotation and generation to the topics app with their rows: a database that has topics, a
topic run, stored embeddings and a near-duplicate pair keeps them, its items keep their topics, and the topics page
still shows them."""

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

BEFORE = [("annotation", "0006_importbatch_writing"), ("generation", "0001_initial"), ("topics", None)]


@pytest.mark.django_db(transaction=True)
def test_migrating_a_database_with_topics_keeps_them_in_the_topics_app(client):
    from django.contrib.contenttypes.models import ContentType

    executor = MigrationExecutor(connection)
    latest = executor.loader.graph.leaf_nodes()
    executor.migrate(BEFORE)
    try:
        old = executor.loader.project_state(BEFORE[:2]).apps
        user = get_user_model().objects.create_user("ana", password="pw-ana-123")
        project = old.get_model("annotation", "Project").objects.create(name="Old", slug="old")
        old.get_model("annotation", "Membership").objects.create(
            project=project, user_id=user.pk, role="curator"
        )
        topic = old.get_model("annotation", "Topic").objects.create(
            project=project, label="Escola", top_words=["escola"], size=2, selected=True
        )
        Item = old.get_model("annotation", "Item")
        first, second = (
            Item.objects.create(project=project, question=question, topic=topic, text_key=key)
            for question, key in (("Por que a escola fecha?", "a"), ("Por que a escola fechou?", "b"))
        )
        run = old.get_model("generation", "TopicRun").objects.create(project=project, n_topics=1)
        old.get_model("generation", "QuestionEmbedding").objects.create(
            item=first, model_name="m", text_key="a", dimensions=1, vector=b"\0\0\0\0"
        )
        old.get_model("generation", "NearDuplicate").objects.create(
            project=project, first=first, second=second, similarity=0.97
        )
        for model in ("topic",):
            ContentType.objects.get_or_create(app_label="annotation", model=model)
        for model in ("topicrun", "questionembedding", "nearduplicate"):
            ContentType.objects.get_or_create(app_label="generation", model=model)
        ContentType.objects.clear_cache()

        MigrationExecutor(connection).migrate(latest)
        ContentType.objects.clear_cache()

        from annotation.models import Item as ItemNow
        from topics.models import NearDuplicate, QuestionEmbedding, Topic, TopicRun

        moved = Topic.objects.get()
        assert (moved.pk, moved.label, moved.size, moved.selected) == (topic.pk, "Escola", 2, True)
        assert set(ItemNow.objects.values_list("topic_id", flat=True)) == {topic.pk}
        assert TopicRun.objects.get().pk == run.pk
        assert QuestionEmbedding.objects.get().item_id == first.pk
        assert NearDuplicate.objects.get().second_id == second.pk
        for model in ("topic", "topicrun", "questionembedding", "nearduplicate"):
            assert ContentType.objects.filter(app_label="topics", model=model).exists(), model
        assert not ContentType.objects.filter(app_label="annotation", model="topic").exists()
        assert not ContentType.objects.filter(
            app_label="generation", model__in=["topicrun", "questionembedding", "nearduplicate"]
        ).exists()
        client.force_login(user)
        page = client.get("/generation/p/old/topics/")
        assert page.status_code == 200, page.content
        assert "Escola" in page.content.decode()
    finally:
        MigrationExecutor(connection).migrate(latest)
