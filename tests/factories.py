"""Factories for test data. Use them instead of building rows by hand."""

import factory
from django.contrib.auth import get_user_model

from annotation.importing.funnel import text_key
from annotation.models import Item, Option, Project

PASSWORD = "correct horse battery"


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = get_user_model()
        django_get_or_create = ("username",)

    username = factory.Sequence(lambda n: f"user{n}")
    password = factory.django.Password(PASSWORD)


class ProjectFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Project
        django_get_or_create = ("slug",)

    name = factory.Sequence(lambda n: f"Project {n}")
    slug = factory.Sequence(lambda n: f"project-{n}")
    overlap = 3


class ItemFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Item

    project = factory.SubFactory(ProjectFactory)
    question = factory.Sequence(lambda n: f"Por que a pergunta número {n} tem uma causa?")
    causal_class = "associational"
    reference_answer = "Porque sim, por um mecanismo causal claro."
    answer_by = Item.AnswerBy.HUMAN
    status = Item.Status.IN_REVIEW
    round = 1
    text_key = factory.LazyAttribute(lambda item: text_key(item.question))


class OptionFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Option

    item = factory.SubFactory(ItemFactory)
    text = factory.Sequence(lambda n: f"Opção {n}")
    role = Option.Role.CORRECT
    position = factory.Sequence(lambda n: n % 5)


def api_token_key(user, projects=None) -> str:
    """The key of an API token of ``user`` reaching ``projects`` (default: every project they belong to then).
    The same user object gets the same key each time, as a client keeping its token would."""
    import secrets
    from datetime import timedelta

    from django.utils import timezone

    from annotation.permissions import projects_for_user
    from core.api.tokens import KEY_PREFIX, PREFIX_LENGTH, key_hash
    from core.models import ApiToken

    if projects is None and "_test_api_key" in user.__dict__:
        return user.__dict__["_test_api_key"]
    key = f"{KEY_PREFIX}test-{user.pk}-{secrets.token_urlsafe(16)}"
    token = ApiToken.objects.create(
        user=user,
        prefix=key[:PREFIX_LENGTH],
        key_hash=key_hash(key),
        issued_by=user,
        expires_at=timezone.now() + timedelta(days=90),
    )
    token.projects.set(projects_for_user(user) if projects is None else projects)
    if projects is None:
        user.__dict__["_test_api_key"] = key
    return key
