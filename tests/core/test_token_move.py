"""API tokens moved from evaluation to core with their rows: a database that has tokens keeps them, with their
projects, and they still sign API calls in."""

from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

from core.api.tokens import KEY_PREFIX, key_hash

BEFORE = [("evaluation", "0002_results_import"), ("core", None)]


@pytest.mark.django_db(transaction=True)
def test_migrating_a_database_with_tokens_keeps_them_in_core(client):
    from django.contrib.contenttypes.models import ContentType

    from annotation.models import Membership, Project  # annotation's tables are as they are now

    executor = MigrationExecutor(connection)
    latest = executor.loader.graph.leaf_nodes()
    executor.migrate(BEFORE)
    try:
        old = executor.loader.project_state(BEFORE[:1]).apps
        user = get_user_model().objects.create_user("ana", password="pw-ana-123")
        project = Project.objects.create(name="Old", slug="old")
        Membership.objects.create(project=project, user=user, role=Membership.Role.CURATOR)
        key = KEY_PREFIX + "kept-through-the-move"
        token = old.get_model("evaluation", "ApiToken").objects.create(
            user_id=user.pk,
            name="laptop",
            prefix=key[:12],
            key_hash=key_hash(key),
            expires_at=timezone.now() + timedelta(days=30),
        )
        token.projects.add(project.pk)

        MigrationExecutor(connection).migrate(latest)

        from core.models import ApiToken

        moved = ApiToken.objects.get()
        assert (moved.pk, moved.name, moved.user_id) == (token.pk, "laptop", user.pk)
        assert list(moved.projects.values_list("slug", flat=True)) == ["old"]
        assert ContentType.objects.filter(app_label="core", model="apitoken").exists()
        assert not ContentType.objects.filter(app_label="evaluation", model="apitoken").exists()
        answer = client.get(f"/api/v1/projects/{project.slug}/", headers={"Authorization": f"Token {key}"})
        assert answer.status_code == 200, answer.content
    finally:
        MigrationExecutor(connection).migrate(latest)
