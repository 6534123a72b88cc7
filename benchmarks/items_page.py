"""The curator's items page on a project of 100,000 items: server time of a filtered page of 50.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/NAME .venv/bin/python benchmarks/items_page.py
    .venv/bin/python benchmarks/items_page.py --items 20000 --repeat 5      # a quick look (SQLite)

Builds the project (COPY on PostgreSQL) with topics, classes, statuses, rounds, disagreement and METER-like
metadata, then requests the page in process (Django's test client: the whole view, template included, no
network) for a set of typical filters, each page 1 and a page further on by cursor. Prints p50 / p95 per
filter and ends with one JSON line. Target: every filtered page under 200 ms server time.
"""

import argparse
import json
import random
import statistics
import time

import _django

SLUG = "bench-items-page"
FILTERS = {
    "all": {},
    "status": {"status": "in_review"},
    "class+topic": {"causal_class": "counterfactual", "topic": "TOPIC"},
    "disagreement": {"disagreement_min": "0.5", "sort": "-disagreement"},
    "metadata": {"metadata_key": "stage", "metadata_value": "verified"},
    "search": {"q": "enchentes"},
    "search+status": {"q": "evasão escolar", "status": "in_review"},
    "recent": {"sort": "-updated_at"},
}


def build(items: int, seed: int = 5) -> dict:
    from django.contrib.auth import get_user_model
    from django.db import connection, transaction
    from django.utils import timezone

    from annotation.importing.funnel import text_key
    from annotation.models import Item, Membership, Project
    from core.db.bulk import fast_insert
    from topics.models import Topic

    _django.drop_project(SLUG)
    rng = random.Random(seed)
    started = time.perf_counter()
    subjects = ["a evasão escolar", "as enchentes", "a inflação", "o desmatamento", "a obesidade infantil"]
    places = ["São Paulo", "Ceará", "Rio Grande do Sul", "Pará", "Bahia"]
    with transaction.atomic():
        project = Project.objects.create(name="Benchmark: items page", slug=SLUG)
        topics = [Topic.objects.create(project=project, label=f"tema {n}") for n in range(20)]
        now = timezone.now()
        rows = []
        for n in range(items):
            question = f"Por que {rng.choice(subjects)} aumenta em {rng.choice(places)} no caso {n}?"
            status = rng.choice(
                ["pending", "in_review", "in_review", "approved", "needs_revision", "rejected"]
            )
            judged = rng.randint(0, 3) if status == "in_review" else 0
            rows.append(
                (
                    question,
                    "Porque a renda das famílias cai e os jovens trabalham mais cedo.",
                    rng.choice(["associational", "interventional", "counterfactual"]),
                    text_key(question),
                    f"b-{n}",
                    '{"kind": "human"}',
                    json.dumps({"stage": rng.choice(["draft", "verified", "stem"])}),
                    status,
                    0 if status == "pending" else rng.randint(1, 3),
                    judged,
                    judged,
                    round(rng.random(), 3) if judged == 3 else None,
                    rng.choice(topics).pk,
                )
            )
        fast_insert(
            Item,
            [
                "question",
                "reference_answer",
                "causal_class",
                "text_key",
                "external_id",
                "answer_provenance",
                "metadata",
                "status",
                "round",
                "round_assigned",
                "round_judged",
                "round_disagreement",
                "topic_id",
            ],
            rows,
            constants={
                "project_id": project.pk,
                "origin": "natural",
                "source": "bench",
                "context": "",
                "answer_by": "human",
                "version": 1,
                "position_in_group": 0,
                "created_at": now,
                "updated_at": now,
            },
        )
        if connection.vendor == "postgresql":
            # The search vectors, as the catch-up after an import leaves them (annotation.search).
            from annotation.search import DOCUMENT

            with connection.cursor() as cursor:
                cursor.execute(
                    f"UPDATE annotation_item SET search_vector = {DOCUMENT} WHERE project_id = %s",
                    [project.pk],
                )
        curator, _ = get_user_model().objects.get_or_create(username="bench-curator")
        Membership.objects.get_or_create(user=curator, project=project, defaults={"role": "curator"})
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("VACUUM ANALYZE annotation_item")
    return {"curator": curator, "topic": topics[3].pk, "build_seconds": time.perf_counter() - started}


def reused() -> dict:
    from django.contrib.auth import get_user_model

    from topics.models import Topic

    topic = Topic.objects.filter(project__slug=SLUG, label="tema 3").get()
    return {
        "curator": get_user_model().objects.get(username="bench-curator"),
        "topic": topic.pk,
        "build_seconds": 0.0,
    }


def measure(data: dict, repeat: int) -> dict:
    import re

    from django.test import Client

    client = Client()
    client.force_login(data["curator"])
    url = f"/p/{SLUG}/items/"
    figures = {}
    for name, params in FILTERS.items():
        params = {key: (str(data["topic"]) if value == "TOPIC" else value) for key, value in params.items()}
        client.get(url, params)  # warm: compiled templates, connection
        times, further = [], []
        for _ in range(repeat):
            started = time.perf_counter()
            response = client.get(url, params)
            times.append((time.perf_counter() - started) * 1000)
            assert response.status_code == 200, f"{name}: {response.status_code}"
            cursor = re.search(r'cursor=([\w-]+)" rel="next"', response.content.decode())
            if cursor:
                started = time.perf_counter()
                client.get(url, {**params, "cursor": cursor.group(1)})
                further.append((time.perf_counter() - started) * 1000)
        all_times = sorted(times + further)
        figures[name] = {
            "p50_ms": round(statistics.median(all_times), 1),
            "p95_ms": round(all_times[min(len(all_times) - 1, int(len(all_times) * 0.95))], 1),
            "matches": int(
                re.search(r"([\d.,]+) items? match", response.content.decode())
                .group(1)
                .replace(",", "")
                .replace(".", "")
            )
            if "match" in response.content.decode()
            else 0,
        }
        print(
            f"{name:16} p50 {figures[name]['p50_ms']:7.1f} ms   p95 {figures[name]['p95_ms']:7.1f} ms   "
            f"{figures[name]['matches']} matches"
        )
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--items", type=int, help="100,000 (20,000 with --quick)")
    parser.add_argument("--repeat", type=int, help="10 (5 with --quick)")
    parser.add_argument("--reuse", action="store_true", help="measure the project an earlier run built")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    args.items = args.items or (20_000 if args.quick else 100_000)
    args.repeat = args.repeat or (5 if args.quick else 10)
    _django.setup("items-page", migrate=not args.reuse)
    data = reused() if args.reuse else build(args.items)
    print(f"built {args.items} items in {data['build_seconds']:.1f} s on {_django.database_label()}")
    figures = measure(data, args.repeat)
    worst = max(figure["p95_ms"] for figure in figures.values())
    print(
        json.dumps(
            {
                "benchmark": "items_page",
                "database": _django.database_label(),
                "items": args.items,
                "filters": figures,
                "worst_p95_ms": worst,
                "target_ms": 200,
                "ok": worst < 200,
            }
        )
    )


if __name__ == "__main__":
    main()
