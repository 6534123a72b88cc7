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
