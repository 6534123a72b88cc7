"""Topic modelling of 1,000 and 10,000 questions with the local model: embedding rate and clustering time.

    .venv/bin/python benchmarks/topics.py [--sizes 1000 10000]
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/bench .venv/bin/python benchmarks/topics.py

For each size: a first run embeds every question (and stores the vectors), reduces them with PCA,
clusters with HDBSCAN, finds each topic's words and the near-duplicates; a second run with other
settings reuses the stored vectors. Needs the ``ml`` extra. Ends with one JSON line per size.
"""

import argparse
import json
import random
import time

import _django

THEMES = {
    "educação": (["a universidade", "o curso de direito", "o mestrado", "o estágio", "a faculdade de medicina",
                  "o ensino a distância", "o vestibular", "a bolsa de estudos"],
                 ["conseguir emprego", "mudar de carreira", "ganhar mais", "passar no concurso", "estudar à noite"]),
    "animais": (["o meu gato", "o cachorro", "o filhote", "a ração", "o veterinário", "a vacina do cão",
                 "o aquário", "o papagaio"],
                ["adotar outro gato", "trocar a ração", "castrar o cachorro", "viajar com o pet", "vacinar o filhote"]),
    "tecnologia": (["o código em Python", "o servidor", "o banco de dados", "o site", "o framework",
                    "a inteligência artificial", "o aplicativo", "a nuvem"],
                   ["migrar para a nuvem", "reescrever o sistema", "usar Rails", "adotar microsserviços",
                    "contratar um programador"]),
    "automobilismo": (["a McLaren", "a Ferrari", "o motor Honda", "o piloto", "a Fórmula 1", "o pneu",
                       "a estratégia de box", "o carro"],
                      ["trocar de equipe", "mudar o regulamento", "parar mais cedo", "usar pneu macio",
                       "aumentar o orçamento"]),
    "negócios": (["a empresa", "o investimento", "a estratégia de vendas", "o lucro", "a startup",
                  "o preço do produto", "o marketing", "a loja online"],
                 ["abrir uma filial", "cortar custos", "vender ações", "baixar o preço", "contratar mais gente"]),
    "ciência": (["o universo", "a biologia", "a evolução", "o buraco negro", "a vacina", "o clima",
                 "a física quântica", "o DNA"],
                ["financiar mais pesquisa", "mudar o experimento", "publicar os dados", "usar outro método",
                 "repetir o estudo"]),
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
    from generation.topics.run import TopicParams, topic_run_claim, topic_run_create, topic_run_execute

    topic_run = topic_run_create(project=project, params=TopicParams(**params), enqueue=False)
    topic_run_claim(run_id=topic_run.pk)
    started = time.perf_counter()
    topic_run = topic_run_execute(run_id=topic_run.pk)
    if topic_run.status != "succeeded":
        raise SystemExit(f"the run failed: {topic_run.error}")
    return topic_run, time.perf_counter() - started


def measure(size: int) -> dict:
    from annotation.importing.funnel import text_key
    from annotation.models import Item, Project
    from generation.local_models import sentence_model

    sentence_model("")  # load the model once, outside the timings
    project = Project.objects.create(name=f"bench topics {size}", slug=f"bench-topics-{size}-{int(time.time())}")
    try:
        Item.objects.bulk_create(
            [Item(project=project, question=q, text_key=text_key(q), causal_class="associational")
             for q in questions(size)], batch_size=2000,
        )
        first, first_seconds = run(project, min_cluster_size=max(10, size // 100))
        second, second_seconds = run(project, min_cluster_size=max(15, size // 60), dimensions=5)
    finally:
        project.delete()
    embedding = first.timings["embedding"]
    result = {
        "benchmark": "topics", "database": _django.database_label(), "questions": size,
        "embedding_seconds": embedding, "questions_per_second": round(size / embedding, 1),
        "clustering_seconds": first.timings["clustering"], "describing_seconds": first.timings["describing"],
        "saving_seconds": first.timings["saving"], "first_run_seconds": round(first_seconds, 2),
        "topics": first.n_topics, "residual": first.n_residual, "near_duplicates": first.n_duplicates,
        "recluster_seconds": round(second_seconds, 2), "recluster_embedded": second.total,
        "recluster_topics": second.n_topics,
    }
    print(f"{size:,} questions ({_django.database_label()}): embedding {embedding:.1f} s "
          f"({result['questions_per_second']:,.0f} questions/s); clustering {first.timings['clustering']:.2f} s "
          f"(PCA + HDBSCAN + map + near-duplicates); words {first.timings['describing']:.2f} s; "
          f"saving {first.timings['saving']:.2f} s; {first.n_topics} topics, {first.n_residual} residual")
    print(f"  re-clustering with stored embeddings: {second_seconds:.2f} s in all "
          f"({second.total} embedded, {second.n_topics} topics)")
    return result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="+", help="1000 10000 (500 with --quick)")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    args.sizes = args.sizes or ([500] if args.quick else [1000, 10_000])
    _django.setup("topics")
    results = [measure(size) for size in args.sizes]
    for result in results:
        print(json.dumps(result))


if __name__ == "__main__":
    main()
