"""Freezing a release: the fast path gives, bit for bit, the release the per-item path gave on the same data.

The figures below were computed with the per-item path (ORM objects, one record at a time) before it was
replaced: the checksum and every item's split and position must not move.
"""

import pytest
from django.db import connection

from annotation.models import Item, ItemGroup
from evaluation.releases.build import release_checksum
from evaluation.services import release_cut
from generation.models import LLMCall, ModelEndpoint, PromptTemplate
from tests.factories import ItemFactory, OptionFactory
from topics.models import Topic

pytestmark = pytest.mark.django_db

CHECKSUM = "4b61837d409e1411a759f565f4f42de2bf3497a7cff626bfa933acd49eee5724"
PLACEMENT = [
    ("causal-qa-90002", "test", 4),
    ("causal-qa-90005", "train", 0),
    ("causal-qa-90008", "train", 18),
    ("causal-qa-90011", "train", 9),
    ("causal-qa-90014", "train", 2),
    ("causal-qa-90017", "test", 2),
    ("causal-qa-90020", "train", 16),
    ("causal-qa-90023", "train", 3),
    ("causal-qa-90026", "train", 22),
    ("causal-qa-90029", "dev", 4),
    ("causal-qa-90032", "train", 19),
    ("causal-qa-90035", "train", 25),
    ("causal-qa-90038", "dev", 3),
    ("causal-qa-90041", "train", 10),
    ("causal-qa-90044", "test", 6),
    ("causal-qa-90047", "train", 12),
    ("cqa-000", "train", 7),
    ("cqa-002", "test", 7),
    ("cqa-003", "dev", 8),
    ("cqa-005", "train", 23),
    ("cqa-006", "dev", 7),
    ("cqa-008", "train", 5),
    ("cqa-009", "test", 8),
    ("cqa-011", "train", 4),
    ("cqa-012", "dev", 2),
    ("cqa-014", "dev", 5),
    ("cqa-015", "train", 20),
    ("cqa-017", "dev", 0),
    ("cqa-018", "test", 5),
    ("cqa-020", "train", 11),
    ("cqa-021", "train", 13),
    ("cqa-023", "test", 9),
    ("cqa-024", "test", 0),
    ("cqa-026", "train", 14),
    ("cqa-027", "train", 26),
    ("cqa-029", "dev", 9),
    ("cqa-030", "train", 8),
    ("cqa-032", "train", 15),
    ("cqa-033", "test", 1),
    ("cqa-035", "train", 24),
    ("cqa-036", "dev", 1),
    ("cqa-038", "train", 17),
    ("cqa-039", "dev", 6),
    ("cqa-041", "train", 27),
    ("cqa-042", "train", 1),
    ("cqa-044", "test", 3),
    ("cqa-045", "train", 21),
    ("cqa-047", "train", 6),
]


def published_items(project):
    """Items shaped the way CausalQA-style data sets publish them: Portuguese and English, grouped scenarios
    with a shared context, multiple-choice options, human and model answers, metadata of every JSON kind."""
    topics = [Topic.objects.create(project=project, label=label) for label in ("Saúde", "Economy & trade")]
    groups = [
        ItemGroup.objects.create(
            pk=81001,
            project=project,
            kind="scenario",
            external_id="cenário-1",
            context="Uma cidade fecha as escolas durante uma epidemia.",
        ),
        ItemGroup.objects.create(
            pk=81002, project=project, kind="seed", context="A central bank raises rates."
        ),
    ]
    endpoint = ModelEndpoint.objects.create(
        name="local", base_url="http://127.0.0.1:1/v1", model="qwen-2.5-72b"
    )
    template = PromptTemplate.objects.create(kind="answer", name="with-context", version=4, user="Answer.")
    call = LLMCall.objects.create(purpose="answer", endpoint=endpoint, template=template)
    metadata = [
        {},
        {"célula": "A3", "nível": 2, "perspectiva": "contrafactual"},
        {"z": [1.5, "ç", None, True], "a": {"b": '"aspas" e\nlinha', "emoji": "🙂"}, "m": -0.0001},
        {"source_row": 41, "lang": "en", "tags": ["rung-2", "=SUM(A1)"]},
    ]
    classes = ["associational", "interventional", "counterfactual", "não-causal"]
    items = []
    for n in range(48):
        grouped = groups[n % 2] if n % 5 == 0 else None
        by_model = n % 3 == 0
        provenance = (
            {"kind": "model", "call_id": call.pk}
            if n % 6 == 0
            else {
                "kind": "model",
                "model": "llama-70b",
                "template": "answer/class-agnostic",
                "template_version": 2,
            }
            if by_model
            else {"kind": "human"}
        )
        items.append(
            ItemFactory(
                pk=90001 + n,
                project=project,
                status=Item.Status.APPROVED,
                question=(
                    f"Por que o caso {n} muda quando a condição muda?"
                    if n % 2
                    else f"Would outcome {n} change if the treatment had not been given?"
                ),
                context="" if grouped or n % 4 else f"Contexto próprio do item {n}.",
                causal_class=classes[n % 4],
                topic=topics[n % 2] if n % 7 else None,
                group=grouped,
                position_in_group=n % 3 if grouped else 0,
                origin=Item.Origin.GENERATED if n % 8 == 0 else Item.Origin.NATURAL,
                source="" if n % 8 == 0 else "reddit r/AskScience",
                external_id="" if n % 3 == 1 else f"cqa-{n:03d}",
                reference_answer=f"Porque o mecanismo {n} liga a causa ao efeito." if n % 9 else "",
                answer_by=Item.AnswerBy.MODEL
                if by_model
                else Item.AnswerBy.HUMAN
                if n % 9
                else Item.AnswerBy.NOBODY,
                answer_provenance=provenance,
                round=1 + n % 3,
                metadata=metadata[n % 4],
            )
        )
    for item in items[::4]:
        for position, role in enumerate(["correct", "contradictory", "unfounded", "reversal", "irrelevant"]):
            OptionFactory(
                item=item,
                role=role,
                position=position,
                text=f"Opção {role} — {item.pk % 100}",
                rationale="" if position % 2 else f"Porque {role}",
            )
    OptionFactory(item=items[1], role="correct", position=0, text="+ the first", rationale="")
    OptionFactory(item=items[1], role="correct", position=2, text="the third", rationale="both hold")
    OptionFactory(item=items[1], role="irrelevant", position=1, text="@mention", rationale="")
    ItemFactory(pk=90100, project=project, status=Item.Status.IN_REVIEW)  # not gold: never released
    return items


def placement(release) -> list:
    return sorted(release.items.values_list("data__id", "split", "position"))


def test_the_fast_freeze_gives_the_checksum_and_splits_of_the_per_item_path(project):
    published_items(project)
    release = release_cut(project=project, seed=7, split_ratios="0.6,0.2,0.2")
    assert release.checksum == CHECKSUM
    assert placement(release) == PLACEMENT


def test_the_streamed_checksum_is_the_checksum_of_what_was_stored(project):
    published_items(project)
    release = release_cut(project=project, seed=7, split_ratios="0.6,0.2,0.2")
    assert release.checksum == release_checksum(release)


@pytest.mark.django_db(transaction=True)
def test_a_build_outside_any_transaction_freezes_the_same_release(project, monkeypatch):
    """A worker builds outside any transaction: on PostgreSQL the records then stream through a second
    connection's COPY (``StreamedInsert``) while the first reads the next items. Same checksum, same splits."""
    from core.db import bulk

    copies = []
    open_copy = bulk.StreamedInsert._open_copy
    monkeypatch.setattr(bulk.StreamedInsert, "_open_copy", lambda self: copies.append(1) or open_copy(self))
    published_items(project)

    release = release_cut(project=project, seed=7, split_ratios="0.6,0.2,0.2")

    assert release.checksum == CHECKSUM == release_checksum(release)
    assert placement(release) == PLACEMENT
    assert bool(copies) == (connection.vendor == "postgresql")
