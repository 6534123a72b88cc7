"""Questions of clearly separate themes, for the topic tests and the benchmark."""

import random

from annotation.importing.funnel import text_key
from topics.run import TopicParams, topic_run_claim, topic_run_create, topic_run_execute

THEMES = {
    "education": [
        "universidade",
        "emprego",
        "estudo",
        "curso",
        "faculdade",
        "carreira",
        "diploma",
        "estágio",
    ],
    "pets": ["gato", "cachorro", "ração", "veterinário", "filhote", "coleira", "pelo", "vacina"],
    "code": ["python", "código", "site", "servidor", "framework", "banco", "deploy", "bug"],
}
CLASSES = ["associational", "interventional", "counterfactual"]


def themed_questions(n_per_theme: int, seed: int = 1) -> list[tuple[str, str]]:
    """(question, theme) pairs, each question made of five of its theme's words and a number."""
    rng = random.Random(seed)
    rows = []
    for theme, words in THEMES.items():
        for n in range(n_per_theme):
            rows.append((f"Por que {' '.join(rng.sample(words, 5))} {n}?", theme))
    return rows


def create_items(project, rows, **fields):
    from annotation.models import Item

    return Item.objects.bulk_create(
        [
            Item(
                project=project,
                question=question,
                text_key=text_key(question),
                causal_class=CLASSES[n % 3],
                metadata={"theme": theme},
                **fields,
            )
            for n, (question, theme) in enumerate(rows)
        ]
    )


def run_now(project, **params):
    """A topic run of ``project`` with ``params``, made and run here (no worker)."""
    run = topic_run_create(project=project, params=TopicParams(**params), enqueue=False)
    assert topic_run_claim(run_id=run.pk)
    return topic_run_execute(run_id=run.pk)
