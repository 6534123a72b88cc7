"""Building judged and approved items for the evaluation tests."""

from annotation.models import Item, ItemGroup, Judgment
from tests.factories import ItemFactory, OptionFactory


def judge(item, annotator, *, vote="accept", causal_class=None, ratings=None, round=None):
    return Judgment.objects.create(
        item=item,
        annotator=annotator,
        round=item.round if round is None else round,
        vote=vote,
        causal_class=item.causal_class if causal_class is None else causal_class,
        ratings=ratings
        if ratings is not None
        else {"adherence": 4, "fluency": 4, "coherence": 4, "relevance": 4},
    )


def approved_items(project, counts: dict[str, int], *, groups_of: int = 0, answer_by_model_every: int = 0):
    """Approved items per causal class; with ``groups_of`` > 1, consecutive items of a class share a group."""
    items = []
    for causal_class, n in counts.items():
        group = None
        for index in range(n):
            if groups_of > 1 and index % groups_of == 0:
                group = ItemGroup.objects.create(
                    project=project, kind="scenario", external_id=f"{causal_class}-g{index}"
                )
            by_model = answer_by_model_every and index % answer_by_model_every == 0
            items.append(
                ItemFactory(
                    project=project,
                    causal_class=causal_class,
                    status=Item.Status.APPROVED,
                    group=group if groups_of > 1 else None,
                    position_in_group=index % groups_of if groups_of > 1 else 0,
                    answer_by=Item.AnswerBy.MODEL if by_model else Item.AnswerBy.HUMAN,
                    answer_provenance={
                        "kind": "model",
                        "model": "llama-70b",
                        "template": "answer/class-agnostic",
                        "template_version": 2,
                    }
                    if by_model
                    else {"kind": "human"},
                    external_id=f"{causal_class}-{index}",
                )
            )
    return items


def with_options(item):
    roles = ["correct", "contradictory", "unfounded", "reversal", "irrelevant"]
    for position, role in enumerate(roles):
        OptionFactory(item=item, role=role, position=position, text=f"{role} option", rationale=f"why {role}")
    return item
