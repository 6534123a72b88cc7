"""A benchmark run's throughput, its report's cost, and BERTScore's speed, against the fake model server.

    .venv/bin/python benchmarks/eval_run.py [--items 1000] [--repetitions 3] [--concurrency 32] [--latency 0.2]
        [--models 3] [--worker POOL:N] [--quick]

A multiple-choice project of ``items`` released items (all in the test split but a few train
items) is evaluated zero-shot ``repetitions`` times in this process, as a worker's task would
(the process started as a worker starts, run claimed, its job run by the generation runner): the ideal rate is concurrency / latency
calls per second. With ``--models N`` the run asks N models side by side (N endpoints, each
with its own fake server and ``concurrency``): the ideal is N × concurrency / latency. With ``--worker POOL:N``
the run is queued to a real Celery worker started with that pool and concurrency (``threads:8`` as `make run`
starts it, ``prefork:4`` as docker-compose does): its task hands the run's other models' jobs to the queue, so
with a prefork pool each model answers in a process (a core) of its own; the time is from queueing the run to
the run's end (once the worker took it), the CPU that of the worker's processes. Then the report's tables
and plots are built, and BERTScore is computed with the packaged model (if the ml extra is installed) for
``pairs`` answer/reference pairs of about 100 words each (every text its own; then with each reference shared by
three answers), and for up to 30 pairs of about 600 words (longer than the 512-token window: read whole in
overlapping windows), scored as a run's BERTScore stage scores them. ``--bertscore-only`` measures only that.
Ends with one JSON line.
"""

import argparse
import json
import multiprocessing
import os
import sys
import threading
import time
from pathlib import Path

import _django

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


BENCH_VARIANTS = [["--models", "3"]]  # make bench runs it a second time, three models side by side


def serve(latency: float, concurrency: int, pipe) -> None:
    from tests.fake_llm import FakeLLM, Reply

    server = FakeLLM(latency=latency, max_concurrency=concurrency).start()
    server.responder = lambda received: Reply.json({"answer": "A"})
    pipe.send(server.base_url)
    threading.Event().wait()


def serve_elsewhere(latency: float, concurrency: int):
    """A fake model server in a process of its own: a real one runs elsewhere, so its work is not the runner's
    (in this process it would take the runner's CPU and interpreter lock)."""
    parent, child = multiprocessing.Pipe()
    process = multiprocessing.get_context("spawn").Process(
        target=serve, args=(latency, concurrency, child), daemon=True
    )
    process.start()
    return process, parent.recv()


SENTENCES = [
    "A chuva forte do dia {n} causou a enchente que fechou a escola do bairro por uma semana.",
    "Os moradores disseram que a água subiu rápido porque o rio já estava cheio.",
    "A prefeitura abriu abrigos e distribuiu comida para as famílias que perderam a casa.",
    "Especialistas lembram que o desmatamento das margens deixa o solo sem proteção.",
    "Sem a mata ciliar, a terra desce para o leito e o rio transborda com menos chuva.",
    "No ano seguinte, obras de drenagem reduziram os alagamentos nas ruas mais baixas.",
    "Mesmo assim, a defesa civil recomenda que as famílias deixem as áreas de risco.",
]


def long_answer(n: int, words: int) -> str:
    """A Portuguese answer of about ``words`` words (whole sentences), its own for each ``n``: the first sentence
    carries the number."""
    text, k = [SENTENCES[0].format(n=n)], n
    while len(" ".join(text).split()) < words:
        k += 3
        text.append(SENTENCES[k % len(SENTENCES)].format(n=n))
    return " ".join(text)


def answer_pairs(n: int, words: int, *, repetitions: int = 1) -> tuple[list[str], list[str]]:
    """``n`` candidates and their references as a run scores them: every answer its own, and each reference
    shared by ``repetitions`` pairs in a row (an item answered that many times), else its own too (no text is
    both a reference and another pair's candidate, which BERTScore would embed once for both); lengths spread
    from 0.6 to 1.4 times ``words`` (a batch of texts of unequal lengths is padded, as real answers are)."""

    def length(i: int) -> int:
        return round(words * (0.6 + 0.8 * (i * 37 % 101) / 100))

    candidates = [long_answer(i, length(i)) for i in range(n)]
    references = [long_answer(n + i // repetitions, length(n + i // repetitions)) for i in range(n)]
    if len(set(candidates + references)) != n + -(-n // repetitions):
        raise AssertionError("the benchmark's texts must all differ")
    return candidates, references


def bertscore_speed(pairs: int) -> dict:
    """BERTScore pairs per second, scored as a run's BERTScore stage scores them (in its batches, an item's
    answers together): ~100-word answers each with its own reference, the same with each reference shared by
    three answers (three repetitions), and ~600-word answers (read in windows)."""
    try:
        from evaluation.runs.bertscore import bertscore, scorer
        from evaluation.runs.services import BERTSCORE_BATCH

        model = scorer()
    except RuntimeError as exc:  # the ml extra is missing (LocalModelUnavailable)
        print(f"BERTScore not measured: {exc}")
        return {"bertscore_pairs_per_second": None}
    figures = {}
    bertscore(*answer_pairs(2, 100), model=model)  # torch's first call
    for key, words, n, repetitions in (
        ("100", 100, pairs, 1),
        ("100x3", 100, pairs, 3),
        ("600", 600, min(30, max(10, pairs // 10)), 1),
    ):
        candidates, references = answer_pairs(n, words, repetitions=repetitions)
        started, cpu = time.perf_counter(), time.process_time()
        for first in range(0, n, BERTSCORE_BATCH):
            last = first + BERTSCORE_BATCH
            bertscore(candidates[first:last], references[first:last], model=model)
        figures[key] = round(n / (time.perf_counter() - started), 1)
        figures[f"cpu{key}"] = round(1000 * (time.process_time() - cpu) / n, 1)
        shared = f", each reference shared by {repetitions} answers" if repetitions > 1 else ""
        print(
            f"BERTScore, ~{words}-word answers{shared}: {figures[key]} pairs/s, CPU {figures[f'cpu{key}']} ms "
            f"per pair ({n} pairs in batches of {BERTSCORE_BATCH}, {model.windowed(candidates + references)} "
            f"texts read in windows; {model.precision})",
            flush=True,
        )
    return {
        "bertscore_pairs_per_second": figures["100"],
        "bertscore_shared_reference_pairs_per_second": figures["100x3"],
        "bertscore_long_pairs_per_second": figures["600"],
        "bertscore_cpu_ms_per_pair": figures["cpu100"],
        "bertscore_precision": model.precision,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--pairs",
        type=int,
        help="BERTScore pairs of ~100-word answers: 1000 (50 with --quick)",
    )
    parser.add_argument("--bertscore-only", action="store_true")
    parser.add_argument("--items", type=int, help="1000 (200 with --quick)")
    parser.add_argument("--repetitions", type=int, help="3 (2 with --quick)")
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--models", type=int, default=1, help="models answering side by side")
    parser.add_argument(
        "--worker",
        help="POOL:N: run in a real Celery worker (threads:8 as `make run`, prefork:4 as docker-compose)",
    )
    parser.add_argument("--quick", action="store_true", help="smaller defaults; 50 BERTScore pairs")
    args = parser.parse_args()
    args.items = args.items or (200 if args.quick else 1000)
    args.repetitions = args.repetitions or (2 if args.quick else 3)
    args.pairs = args.pairs or (50 if args.quick else 1000)
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

    prompt_templates_load()
    stamp = int(time.time())
    project = Project.objects.create(
        name="bench eval", slug=f"bench-eval-{stamp}", answer_format="multiple_choice"
    )
    questions = [f"Qual opção explica o caso de teste {n}?" for n in range(args.items)]
    items = Item.objects.bulk_create(
        Item(
            project=project,
            question=q,
            causal_class=["associational", "interventional", "counterfactual"][n % 3],
            status="approved",
            text_key=text_key(q),
            reference_answer="certa",
            metadata={"level": str(n % 3 + 1)},
        )
        for n, q in enumerate(questions)
    )
    roles = ["correct", "contradictory", "unfounded", "reversal", "irrelevant"]
    Option.objects.bulk_create(
        Option(item=item, role=role, position=p, text=f"{role} {item.pk}")
        for item in items
        for p, role in enumerate(roles)
    )
    started = time.perf_counter()
    release = release_cut(project=project, split_ratios=[0.02, 0.0, 0.98])
    cut = time.perf_counter() - started
    servers, endpoints = [], []
    for n in range(args.models):
        server, base_url = serve_elsewhere(args.latency, args.concurrency)
        servers.append(server)
        endpoints.append(
            ModelEndpoint.objects.create(
                name=f"bench-{stamp}-{n}",
                base_url=base_url,
                model=f"fake-bench-{n}",
                api_key_env="",
                requests_per_minute=0,
                max_concurrency=args.concurrency,
                timeout_seconds=30,
            )
        )
    run = run_create(
        project=project,
        release=release,
        endpoints=endpoints,
        conditions=["zero-shot"],
        repetitions=args.repetitions,
        enqueue=False,
    )
    if args.worker:
        wall, cpu = in_worker(run, args.worker)
    else:
        from causalqa_site.celery import worker_started

        worker_started()  # this process runs the run as a worker does: started as one
        assert run_claim(run_id=run.pk, owner="bench")
        started = time.perf_counter()
        cpu = os.times()
        run_execute(run_id=run.pk, owner="bench")
        wall = time.perf_counter() - started
        cpu = sum(os.times()[:2]) - sum(cpu[:2])
    run.refresh_from_db()
    calls = run.responses.count()
    ideal = args.models * args.concurrency / args.latency
    started = time.perf_counter()
    tables = report_tables([run])
    report_seconds = time.perf_counter() - started
    server_cpu = sum(_tree_cpu_seconds(server.pid) for server in servers)
    for server in servers:
        server.terminate()
    result = {
        "benchmark": "eval_run",
        "models": args.models,
        "worker": args.worker or "in this process",
        "load_average": round(os.getloadavg()[0], 2),
        "status": run.status,
        "calls": calls,
        "seconds": round(wall, 2),
        "calls_per_second": round(calls / wall, 1),
        "ideal": ideal,
        "ratio": round(calls / wall / ideal, 2),
        "cpu_ms_per_call": round(1000 * cpu / calls, 2),
        # The fake servers' CPU (their whole life, mostly this run): on a 2-core machine it is taken from the runner.
        "fake_server_cpu_ms_per_call": round(1000 * server_cpu / calls, 2),
        "release_cut_seconds": round(cut, 2),
        "report_seconds": round(report_seconds, 2),
        "tables": len(tables),
    }
    result.update(bertscore_speed(args.pairs))
    print(
        f"{calls} calls in {wall:.1f} s: {calls / wall:.0f} calls/s of an ideal {ideal:.0f}; "
        f"report in {report_seconds:.2f} s"
    )
    print(json.dumps(result))


def in_worker(run, worker_spec: str) -> tuple[float, float]:
    """Queue the run to a real worker (``pool:concurrency``); its wall time and its processes' CPU time."""
    import tempfile

    from evaluation.models import EvalRun
    from evaluation.runs.services import run_enqueue
    from tests.workers import CeleryWorker

    pool, concurrency = worker_spec.split(":")
    worker = CeleryWorker(
        log_path=Path(tempfile.mkdtemp()) / "worker.log", concurrency=int(concurrency), pool=pool
    )
    worker.start()
    try:
        cpu = _tree_cpu_seconds(worker.process.pid)
        started = time.perf_counter()
        run_enqueue(run.pk)
        while not EvalRun.objects.filter(pk=run.pk, status__in=FINISHED).exists():
            time.sleep(0.05)
        queued = time.perf_counter() - started
        cpu = _tree_cpu_seconds(worker.process.pid) - cpu
        run.refresh_from_db()
        # From the worker taking the run to its end, as in this process (the broker's delivery apart).
        wall = (run.finished_at - run.started_at).total_seconds()
        print(f"{queued:.2f} s from queueing the run to seeing it finished; {wall:.2f} s running")
    finally:
        worker.stop()
    return wall, cpu


FINISHED = ["succeeded", "failed", "cancelled"]


def _tree_cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process and its children (Linux): a prefork worker's pool processes."""
    total = 0.0
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        total = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        for task in Path(f"/proc/{pid}/task").iterdir():
            for child in (task / "children").read_text().split():
                total += _tree_cpu_seconds(int(child))
    except (FileNotFoundError, ProcessLookupError):
        pass
    return total


if __name__ == "__main__":
    main()
