"""The annotator's loop against a running server: next item → save an edit → submit, over HTTP.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/NAME .venv/bin/python benchmarks/annotation_loop.py
    .venv/bin/python benchmarks/annotation_loop.py --items 20000 --seconds 5     # a quick look (SQLite)

Builds a project of 100,000 items in review (a fifth of them multiple choice) with 20 annotators,
starts gunicorn on the same database, and drives the loop with one client, then with 20 at
once. Each client has its own signed-in session and keeps its connection open. For every kind of
request it prints the client-side latency and the server's own time (gunicorn's access log,
``%(D)s``), percentiles p50 / p95 / p99, and requests per second. Ends with one JSON line.
Targets: server median under 12 ms for one annotator, server p95 under 50 ms for 20 at once.
"""

import argparse
import http.client
import json
import os
import random
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from http.cookies import SimpleCookie
from importlib import import_module
from pathlib import Path
from urllib.parse import urlencode

import _django

ROOT = Path(__file__).resolve().parent.parent
SLUG = "bench-annotation-loop"
OPS = ("next", "page", "edit", "submit")
ROLES = ["correct", "contradictory", "unfounded", "reversal", "irrelevant"]


def build(items: int, annotators: int, seed: int = 3) -> dict:
    """The project, its items (COPY on PostgreSQL) and annotators with sessions; returns what clients need."""
    from django.conf import settings
    from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY, get_user_model
    from django.db import connection, transaction
    from django.utils import timezone

    from annotation.importing.funnel import text_key
    from annotation.models import Item, Membership, Option, Project
    from core.db.bulk import fast_insert

    _django.drop_project(SLUG)
    rng = random.Random(seed)
    started = time.perf_counter()
    with transaction.atomic():
        project = Project.objects.create(
            name="Benchmark: annotation loop",
            slug=SLUG,
            overlap=3,
            guidelines="# Diretrizes\n\nAvalie cada critério de 1 a 5.",
        )
        now = timezone.now()
        fast_insert(
            Item,
            # JSON columns go in the rows, already serialised (see core.db.bulk).
            [
                "question",
                "reference_answer",
                "causal_class",
                "text_key",
                "external_id",
                "answer_provenance",
                "metadata",
            ],
            (
                (
                    question
                    := f"Por que a evasão escolar aumenta em {rng.choice(['SP', 'CE', 'RS'])} no caso {n}?",
                    "Porque a renda das famílias cai e os jovens passam a trabalhar mais cedo.",
                    rng.choice(["associational", "interventional", "counterfactual"]),
                    text_key(question),
                    f"bench-{n}",
                    '{"kind": "human"}',
                    "{}",
                )
                for n in range(items)
            ),
            constants={
                "project_id": project.pk,
                "origin": "natural",
                "source": "bench",
                "context": "",
                "answer_by": "human",
                "status": "in_review",
                "round": 1,
                "version": 1,
                "position_in_group": 0,
                "created_at": now,
                "updated_at": now,
            },
        )
        item_ids = list(Item.objects.filter(project=project).values_list("pk", flat=True))
        multiple_choice = item_ids[::5]
        fast_insert(
            Option,
            ["item_id", "text", "role", "rationale", "position"],
            (
                (item_id, f"Opção {position}", ROLES[position], "Justificativa curta.", position)
                for item_id in multiple_choice
                for position in range(5)
            ),
        )
        User = get_user_model()
        sessions = []
        for number in range(annotators):
            user, _ = User.objects.get_or_create(username=f"bench-annotator-{number}")
            Membership.objects.get_or_create(user=user, project=project, defaults={"role": "annotator"})
            session = import_module(settings.SESSION_ENGINE).SessionStore()
            session[SESSION_KEY] = str(user.pk)
            # The backend that signs users in (the first one only throttles attempts: it has no get_user).
            session[BACKEND_SESSION_KEY] = "core.db.auth.UserBackend"
            session[HASH_SESSION_KEY] = user.get_session_auth_hash()
            session.create()
            sessions.append(session.session_key)
    if connection.vendor == "postgresql":
        # Fresh statistics, and no dead rows left by an earlier run's project (as a database in use would be).
        with connection.cursor() as cursor:
            for table in (
                "annotation_item",
                "annotation_option",
                "annotation_assignment",
                "annotation_revision",
                "annotation_judgment",
            ):
                cursor.execute(f"VACUUM ANALYZE {table}")
    return {
        "sessions": sessions,
        "build_seconds": time.perf_counter() - started,
        "criteria": project.criterion_keys,
    }


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_server(port: int, workers: int, log_path: Path) -> subprocess.Popen:
    """gunicorn on the benchmark's database; its own messages go to a file beside the access log."""
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "causalqa_site.settings",
        "DEBUG": "0",
        "LOG_LEVEL": "ERROR",
        "PYTHONPATH": str(ROOT),
    }
    with open(log_path.with_name("server.log"), "ab") as errors:  # the child keeps its own descriptor
        server = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "gunicorn",
                "causalqa_site.wsgi",
                "--bind",
                f"127.0.0.1:{port}",
                "--workers",
                str(workers),
                "--worker-class",
                "sync",
                "--keep-alive",
                "30",
                "--log-level",
                "error",
                "--access-logfile",
                str(log_path),
                "--access-logformat",
                "%(m)s %(U)s %(s)s %(D)s",
            ],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=errors,
        )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if Http("127.0.0.1", port, {}).request("GET", "/healthz")[0] == 200:
                return server
        except OSError:
            time.sleep(0.2)
    server.kill()
    raise RuntimeError("gunicorn did not start")


class Http:
    """A small HTTP client on the standard library: the load generator should leave the CPU to the server."""

    def __init__(self, host: str, port: int, cookies: dict[str, str]):
        self.connection = http.client.HTTPConnection(host, port, timeout=30)
        self.cookies = dict(cookies)

    def request(self, method: str, path: str, data: dict | None = None, headers: dict | None = None):
        body = urlencode(data) if data is not None else None
        sent = {
            "Cookie": "; ".join(f"{name}={value}" for name, value in self.cookies.items()),
            **(headers or {}),
        }
        if body is not None:
            sent["Content-Type"] = "application/x-www-form-urlencoded"
        try:
            self.connection.request(method, path, body, sent)
            response = self.connection.getresponse()
        except (http.client.HTTPException, OSError):
            self.connection.close()  # the server closed a kept-alive connection: ask again on a new one
            self.connection.request(method, path, body, sent)
            response = self.connection.getresponse()
        text = response.read().decode()
        for header in response.headers.get_all("Set-Cookie") or []:
            for name, morsel in SimpleCookie(header).items():
                self.cookies[name] = morsel.value
        return response.status, response.getheader("Location"), text


class Annotator:
    """One client: its own session and connection, walking the loop and timing every request."""

    ITEM = re.compile(r"/items/(\d+)/parts/question/")
    VERSION = re.compile(r'id="item-version">(\d+)<')

    def __init__(self, port: int, session_key: str, criteria: list[str]):
        self.http = Http("127.0.0.1", port, {"sessionid": session_key})
        self.criteria = criteria
        self.timings: dict[str, list[float]] = defaultdict(list)
        self.errors = 0
        self.conflicts = 0
        self.location = None

    def start(self) -> None:
        status, _, _ = self.http.request("GET", "/")
        assert status == 200, f"home page answered {status}"
        self.csrf = self.http.cookies["csrftoken"]

    def _timed(self, op, method, url, **kwargs):
        started = time.perf_counter()
        status, location, text = self.http.request(method, url, **kwargs)
        self.timings[op].append((time.perf_counter() - started) * 1000)
        if status == 409:
            self.conflicts += 1  # two reviewers of one item edited its answer at once: shown side by side
        elif status >= 400:
            self.errors += 1
        return location, text

    def step(self) -> bool:
        """One item: (next if needed) → page → edit → submit, which answers with the next item. False when done."""
        headers = {"X-CSRFToken": self.csrf}
        if self.location is None:
            self.location, _ = self._timed(
                "next",
                "POST",
                f"/p/{SLUG}/queue/next/",
                headers=headers,
                data={"csrfmiddlewaretoken": self.csrf},
            )
        if not self.location or "/assignments/" not in self.location:
            return False
        _, page = self._timed("page", "GET", self.location)
        item_id = int(self.ITEM.search(page).group(1))
        version = self.VERSION.search(page).group(1)
        self._timed(
            "edit",
            "POST",
            f"/p/{SLUG}/items/{item_id}/parts/answer/",
            headers={**headers, "HX-Request": "true"},
            data={
                "value": f"Porque a renda cai e os jovens trabalham mais cedo (revisão {version}).",
                "version": version,
            },
        )
        ratings = {f"rating_{key}": random.choice("345") for key in self.criteria}
        self.location, _ = self._timed(
            "submit",
            "POST",
            f"{self.location}judge/",
            headers=headers,
            data={
                **ratings,
                "vote": random.choice(["accept", "accept", "needs_revision"]),
                "causal_class": "associational",
                "comment": "Falta citar a renda.",
                "csrfmiddlewaretoken": self.csrf,
            },
        )
        return True


def run_phase(
    port: int, sessions: list[str], criteria: list[str], seconds: float, cpu, warmup: int = 3
) -> dict:
    annotators = [Annotator(port, key, criteria) for key in sessions]
    for annotator in annotators:
        annotator.start()
        for _ in range(warmup):
            annotator.step()
        annotator.timings.clear()
    barrier = threading.Barrier(len(annotators) + 1)
    stop = threading.Event()

    def work(annotator):
        barrier.wait()
        while not stop.is_set() and annotator.step():
            pass

    threads = [threading.Thread(target=work, args=(annotator,)) for annotator in annotators]
    for thread in threads:
        thread.start()
    barrier.wait()
    started, cpu_before = time.perf_counter(), cpu()
    time.sleep(seconds)
    stop.set()
    for thread in threads:
        thread.join()
    elapsed, cpu_used = time.perf_counter() - started, cpu() - cpu_before
    timings = defaultdict(list)
    for annotator in annotators:
        for op, values in annotator.timings.items():
            timings[op].extend(values)
    requests = sum(len(values) for values in timings.values())
    return {
        "timings": timings,
        "seconds": elapsed,
        "requests": requests,
        "cpu_seconds": cpu_used,
        "errors": sum(a.errors for a in annotators),
        "conflicts": sum(a.conflicts for a in annotators),
        "items_judged": len(timings["submit"]),
    }


def server_cpu_seconds(server: subprocess.Popen) -> float:
    """CPU time used so far by gunicorn and its workers (user + system), from /proc: unlike wall time, it
    does not grow when other programs share the machine."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        pid, ppid = int(stat.parent.name), int(fields[1])
        if pid == server.pid or ppid == server.pid:
            total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / ticks


def server_times(log_path: Path, offset: int) -> tuple[dict[str, list[float]], int]:
    """Server time per kind of request (ms) from gunicorn's access log lines written after ``offset``."""
    text = log_path.read_text()
    by_op = defaultdict(list)
    for line in text[offset:].splitlines():
        parts = line.split()
        if len(parts) != 4:
            continue
        method, path, _status, micros = parts
        op = _op(method, path)
        if op:
            by_op[op].append(int(micros) / 1000)
    return by_op, len(text)


def _op(method: str, path: str) -> str | None:
    if path.endswith("/queue/next/"):
        return "next"
    if path.endswith("/judge/"):
        return "submit"
    if "/parts/" in path:
        return "edit"
    if method == "GET" and "/assignments/" in path:
        return "page"
    return None


def percentiles(values: list[float]) -> dict:
    if not values:
        return {"n": 0, "p50": None, "p95": None, "p99": None}
    ordered = sorted(values)
    cuts = statistics.quantiles(ordered, n=100, method="inclusive") if len(ordered) > 1 else [ordered[0]] * 99
    return {"n": len(values), "p50": round(cuts[49], 2), "p95": round(cuts[94], 2), "p99": round(cuts[98], 2)}


def report(name: str, phase: dict, server: dict) -> dict:
    print(
        f"\n{name}: {phase['requests']} requests in {phase['seconds']:.1f} s = "
        f"{phase['requests'] / phase['seconds']:.0f} req/s; {phase['items_judged']} items judged; "
        f"{phase['errors']} errors; {phase['conflicts']} edit conflicts (409, shown side by side)"
    )
    cpu_ms = 1000 * phase["cpu_seconds"] / max(phase["requests"], 1)
    print(
        f"  server CPU: {cpu_ms:.1f} ms per request on average (user + system, all gunicorn processes; "
        f"load average now {os.getloadavg()[0]:.1f})"
    )
    print(
        f"  {'request':<8} {'n':>6}   {'server p50':>10} {'p95':>7} {'p99':>7}   {'client p50':>10} {'p95':>7} {'p99':>7}  (ms)"
    )
    result = {
        "requests_per_second": round(phase["requests"] / phase["seconds"], 1),
        "errors": phase["errors"],
        "cpu_ms_per_request": round(cpu_ms, 2),
        "conflicts": phase["conflicts"],
    }
    everything_server, everything_client = [], []
    for op in OPS:
        s, c = percentiles(server.get(op, [])), percentiles(phase["timings"].get(op, []))
        everything_server += server.get(op, [])
        everything_client += phase["timings"].get(op, [])
        if c["n"]:
            print(
                f"  {op:<8} {c['n']:>6}   {s['p50']:>10} {s['p95']:>7} {s['p99']:>7}   {c['p50']:>10} {c['p95']:>7} "
                f"{c['p99']:>7}"
            )
        result[op] = {"server": s, "client": c}
    s, c = percentiles(everything_server), percentiles(everything_client)
    print(
        f"  {'all':<8} {c['n']:>6}   {s['p50']:>10} {s['p95']:>7} {s['p99']:>7}   {c['p50']:>10} {c['p95']:>7} {c['p99']:>7}"
    )
    result["all"] = {"server": s, "client": c}
    return result


TARGETS = {"sqlite": (5, 15), "postgresql": (8, 20)}  # server ms: one annotator's p50, 20 at once p95


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--items", type=int, help="100,000 (10,000 with --quick)")
    parser.add_argument("--annotators", type=int, default=20)
    parser.add_argument("--seconds", type=float, help="duration of each phase: 20 (5 with --quick)")
    parser.add_argument(
        "--workers",
        type=int,
        default=os.cpu_count() or 2,
        help="gunicorn worker processes (default: one per core)",
    )
    parser.add_argument("--keep", action="store_true", help="keep the benchmark project afterwards")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    args.items = args.items or (10_000 if args.quick else 100_000)
    args.seconds = args.seconds or (5.0 if args.quick else 20.0)

    _django.setup("annotation_loop")
    built = build(args.items, args.annotators)
    database = _django.database_label()
    print(
        f"database: {database}; {args.items:,} items in review, {args.annotators} annotators; "
        f"built in {built['build_seconds']:.1f} s"
    )
    from django.db import connections

    connections.close_all()
    port = free_port()
    log_path = Path(tempfile.mkdtemp()) / "access.log"
    server = start_server(port, args.workers, log_path)
    try:
        offset = 0
        log_path.touch()
        one = run_phase(
            port,
            built["sessions"][:1],
            built["criteria"],
            args.seconds,
            cpu=lambda: server_cpu_seconds(server),
        )
        time.sleep(0.5)
        server_one, offset = server_times(log_path, offset)
        # The warm-up of the next phase is logged too; only what the timed phase asked for is kept.
        many = run_phase(
            port, built["sessions"], built["criteria"], args.seconds, cpu=lambda: server_cpu_seconds(server)
        )
        time.sleep(0.5)
        server_many, _ = server_times(log_path, offset)
        server_many = {
            op: values[-len(many["timings"][op]) :]
            for op, values in server_many.items()
            if many["timings"].get(op)
        }
        server_one = {
            op: values[-len(one["timings"][op]) :]
            for op, values in server_one.items()
            if one["timings"].get(op)
        }
        print(f"gunicorn: {args.workers} sync workers on 127.0.0.1:{port}")
        single = report("1 annotator", one, server_one)
        crowd = report(f"{args.annotators} annotators at once", many, server_many)
    finally:
        server.terminate()
        server.wait(timeout=30)
        if not args.keep:
            _django.drop_project(SLUG)
    print(
        json.dumps(
            {
                "benchmark": "annotation_loop",
                "database": database,
                "items": args.items,
                "annotators": args.annotators,
                "gunicorn_workers": args.workers,
                "one_annotator": {
                    "server_p50_ms": single["all"]["server"]["p50"],
                    "server_p95_ms": single["all"]["server"]["p95"],
                    "server_p99_ms": single["all"]["server"]["p99"],
                    "client_p50_ms": single["all"]["client"]["p50"],
                    "requests_per_second": single["requests_per_second"],
                    "server_cpu_ms_per_request": single["cpu_ms_per_request"],
                },
                "concurrent": {
                    "server_p50_ms": crowd["all"]["server"]["p50"],
                    "server_p95_ms": crowd["all"]["server"]["p95"],
                    "server_p99_ms": crowd["all"]["server"]["p99"],
                    "client_p95_ms": crowd["all"]["client"]["p95"],
                    "requests_per_second": crowd["requests_per_second"],
                    "server_cpu_ms_per_request": crowd["cpu_ms_per_request"],
                },
                "load_average_at_end": round(os.getloadavg()[0], 2),
                "errors": single["errors"] + crowd["errors"],
                "edit_conflicts": single["conflicts"] + crowd["conflicts"],
                # Targets: keep ≤ 5 / 15 ms on SQLite, ≤ 8 / 20 ms on PostgreSQL (server p50 alone, p95 at once).
                "targets_met": {
                    "one_annotator_p50": (single["all"]["server"]["p50"] or 1e9) <= TARGETS[database][0],
                    "concurrent_p95": (crowd["all"]["server"]["p95"] or 1e9) <= TARGETS[database][1],
                },
            }
        )
    )


if __name__ == "__main__":
    main()
