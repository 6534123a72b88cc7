"""Building released projects of each answer format, and running evaluation runs, for the run tests."""

import re

from annotation.models import Item, ItemGroup, Option
from evaluation.models import EvalRun
from evaluation.runs.services import run_claim, run_execute
from evaluation.services import release_cut
from generation.models import ModelEndpoint
from tests.factories import ItemFactory, OptionFactory
from tests.fake_llm import Reply

ROLES = ["correct", "contradictory", "unfounded", "reversal", "irrelevant"]


def second_endpoint(endpoint, name="fake-2", model="fake-model-2") -> ModelEndpoint:
    return ModelEndpoint.objects.create(
        name=name,
        base_url=endpoint.base_url,
        model=model,
        api_key_env=endpoint.api_key_env,
        max_concurrency=4,
        requests_per_minute=0,
        timeout_seconds=5,
    )


def release_of(project, *, ratios=(0.5, 0.0, 0.5), seed=3):
    return release_cut(project=project, seed=seed, split_ratios=list(ratios))


def open_items(project, n=6, classes=("associational", "interventional", "counterfactual")):
    return [
        ItemFactory(
            project=project,
            status=Item.Status.APPROVED,
            causal_class=classes[i % len(classes)],
            question=f"Por que a causa {i} leva ao efeito?",
            reference_answer=f"Porque a causa {i} age.",
            answer_by=Item.AnswerBy.HUMAN if i % 2 == 0 else Item.AnswerBy.MODEL,
        )
        for i in range(n)
    ]


def mc_items(project, n=8, levels=("1", "2", "3")):
    """Multiple-choice items; the correct option's place moves (A, B, C…), each item says it in metadata."""
    project.answer_format = project.AnswerFormat.MULTIPLE_CHOICE
    project.save(update_fields=["answer_format"])
    items = []
    for i in range(n):
        item = ItemFactory(
            project=project,
            status=Item.Status.APPROVED,
            question=f"Qual opção explica o caso {i}?",
            metadata={
                "level": levels[i % len(levels)],
                "task": ["AJ", "PJ"][i % 2],
                "variant": ["original", "negated"][i // 2 % 2],
            },
        )
        roles = ROLES[-(i % 5) :] + ROLES[: -(i % 5)] if i % 5 else ROLES
        for position, role in enumerate(roles):
            OptionFactory(item=item, role=role, position=position, text=f"{role} do caso {i}")
        items.append(item)
    return items


def yes_no_items(project, groups=3, per_group=4):
    project.answer_format = project.AnswerFormat.YES_NO
    project.save(update_fields=["answer_format"])
    items = []
    for g in range(groups):
        group = ItemGroup.objects.create(project=project, kind="scenario", external_id=f"cenario-{g}")
        for k in range(per_group):
            items.append(
                ItemFactory(
                    project=project,
                    status=Item.Status.APPROVED,
                    group=group,
                    position_in_group=k,
                    question=f"No cenário {g}, a pergunta {k} tem resposta sim?",
                    reference_answer="sim" if k % 2 else "não",
                    metadata={
                        "perspective": [
                            "cause-to-effect",
                            "effect-to-cause",
                            "intervention",
                            "counterfactual",
                        ][k]
                    },
                )
            )
    return items


def run_here(run: EvalRun) -> dict:
    """Run a queued run in this process, as the worker's task does."""
    assert run_claim(run_id=run.pk, owner="test-run")
    result = run_execute(run_id=run.pk, owner="test-run")
    run.refresh_from_db()
    return result


def asked(received) -> str:
    return re.search(r"(?:Pergunta|Question): (.*)", received.messages[-1]["content"]).group(1).strip()
