"""A benchmark run's throughput, its report's cost, and BERTScore's speed, against the fake model server.

    .venv/bin/python benchmarks/eval_run.py [--items 1000] [--repetitions 3] [--concurrency 32] [--latency 0.2]

A multiple-choice project of ``items`` released items (all in the test split but a few train
items) is evaluated zero-shot ``repetitions`` times in this process, as a worker's task would
(run claimed, its job run by the generation runner): the ideal rate is concurrency / latency
calls per second. Then the report's tables and plots are built, and BERTScore is computed with the
packaged model (if the ml extra is installed) for ``pairs`` answer/reference pairs of about 100 words each, and
for pairs of about 600 words (longer than the 512-token window: read whole in overlapping windows).
``--bertscore-only`` measures only that. Ends with one JSON line.
"""

import argparse
import json
import sys
import time
from pathlib import Path

import _django

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


SENTENCES = ["A chuva forte do dia {n} causou a enchente que fechou a escola do bairro por uma semana.",
             "Os moradores disseram que a água subiu rápido porque o rio já estava cheio.",
             "A prefeitura abriu abrigos e distribuiu comida para as famílias que perderam a casa.",
             "Especialistas lembram que o desmatamento das margens deixa o solo sem proteção.",
             "Sem a mata ciliar, a terra desce para o leito e o rio transborda com menos chuva.",
             "No ano seguinte, obras de drenagem reduziram os alagamentos nas ruas mais baixas.",
             "Mesmo assim, a defesa civil recomenda que as famílias deixem as áreas de risco."]


def long_answer(n: int, words: int) -> str:
    text, k = [], n
    while len(" ".join(text).split()) < words:
        text.append(SENTENCES[k % len(SENTENCES)].format(n=n))
        k += 3
    return " ".join(text)


def bertscore_speed(pairs: int) -> dict:
    """BERTScore pairs per second at ~100-word answers and at ~600-word answers (windowed)."""
    try:
        from evaluation.runs.bertscore import bertscore, scorer

        model = scorer()
    except RuntimeError as exc:  # the ml extra is missing (LocalModelUnavailable)
        print(f"BERTScore not measured: {exc}")
        return {"bertscore_pairs_per_second": None}
    figures = {}
    for words, n in ((100, pairs), (600, max(10, pairs // 10))):
        candidates = [long_answer(i, words) for i in range(n)]
        references = [long_answer(i + 1, words) for i in range(n)]
        bertscore(candidates[:2], references[:2], model=model)
        started = time.perf_counter()
        bertscore(candidates, references, model=model)
        figures[words] = round(n / (time.perf_counter() - started), 1)
        print(f"BERTScore, ~{words}-word answers: {figures[words]} pairs/s ({n} pairs, "
              f"{model.windowed(candidates + references)} texts read in windows)", flush=True)
    return {"bertscore_pairs_per_second": figures[100], "bertscore_long_pairs_per_second": figures[600]}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pairs", type=int, default=300, help="BERTScore pairs of ~100-word answers")
    parser.add_argument("--bertscore-only", action="store_true")
    parser.add_argument("--items", type=int, default=1000)
    parser.add_argument("--repetitions", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--latency", type=float, default=0.2)
    args = parser.parse_args()
    _django.setup("eval-run")
    if args.bertscore_only:
        print(json.dumps(bertscore_speed(args.pairs)))
        return

    from annotation.importing.funnel import text_key
    from annotation.models import Item, Option, Project
    from evaluation.runs.report import report_tables
    from evaluation.runs.services import run_claim, run_create, run_execute
    from evaluation.services import release_cut
    from generation.models import ModelEndpoint
    from generation.services import prompt_templates_load
    from tests.fake_llm import FakeLLM, Reply

    prompt_templates_load()
    stamp = int(time.time())
    project = Project.objects.create(name="bench eval", slug=f"bench-eval-{stamp}", answer_format="multiple_choice")
    questions = [f"Qual opção explica o caso de teste {n}?" for n in range(args.items)]
    items = Item.objects.bulk_create(
        Item(project=project, question=q, causal_class=["associational", "interventional", "counterfactual"][n % 3],
             status="approved", text_key=text_key(q), reference_answer="certa", metadata={"level": str(n % 3 + 1)})
        for n, q in enumerate(questions)
    )
    roles = ["correct", "contradictory", "unfounded", "reversal", "irrelevant"]
    Option.objects.bulk_create(Option(item=item, role=role, position=p, text=f"{role} {item.pk}")
                               for item in items for p, role in enumerate(roles))
    started = time.perf_counter()
    release = release_cut(project=project, split_ratios=[0.02, 0.0, 0.98])
    cut = time.perf_counter() - started
    server = FakeLLM(latency=args.latency, max_concurrency=args.concurrency).start()
    server.responder = lambda received: Reply.json({"answer": "A"})
    endpoint = ModelEndpoint.objects.create(
        name=f"bench-{stamp}", base_url=server.base_url, model="fake-bench", api_key_env="", requests_per_minute=0,
        max_concurrency=args.concurrency, timeout_seconds=30,
    )
    run = run_create(project=project, release=release, endpoints=[endpoint], conditions=["zero-shot"],
                     repetitions=args.repetitions, enqueue=False)
    assert run_claim(run_id=run.pk, owner="bench")
    started = time.perf_counter()
    run_execute(run_id=run.pk, owner="bench")
    wall = time.perf_counter() - started
    run.refresh_from_db()
    calls = run.responses.count()
    ideal = args.concurrency / args.latency
    started = time.perf_counter()
    tables = report_tables([run])
    report_seconds = time.perf_counter() - started
    server.stop()
    result = {"status": run.status, "calls": calls, "seconds": round(wall, 2), "calls_per_second": round(calls / wall, 1),
              "ideal": ideal, "ratio": round(calls / wall / ideal, 2), "release_cut_seconds": round(cut, 2),
              "report_seconds": round(report_seconds, 2), "tables": len(tables)}
    result.update(bertscore_speed(args.pairs))
    print(f"{calls} calls in {wall:.1f} s: {calls / wall:.0f} calls/s of an ideal {ideal:.0f}; "
          f"report in {report_seconds:.2f} s")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
