"""An ExpliCa project at the paper's size: 600 pairs × 8 items = 4,800 items, each rated 1–10 by 15 raters
(72,000 judgments). Times the agreement page (cold, then again with nothing changed, then after one new
judgment) and the aggregation of the 72,000 ratings, in a child process of their own as a server worker would
be, so its peak memory is the page's (the building's is printed beside it).

    .venv/bin/python benchmarks/explica.py [--pairs 600] [--raters 15] [--quick: 150 pairs]
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/bench .venv/bin/python benchmarks/explica.py

Ends with one JSON line.
"""

import argparse
import json
import os
import subprocess
import sys
import time

import _django
import numpy as np


def build_project(n_pairs: int, n_raters: int):
    from django.contrib.auth import get_user_model
    from django.utils import timezone

    from annotation.models import Assignment, Item, Judgment, Membership, Project
    from annotation.queue import items_recount_rounds
    from designs.explica.design import RATING, ExplicaDesign, explica_pair_add

    User = get_user_model()
    project = Project.objects.create(
        name="bench explica",
        slug=f"bench-explica-{int(time.time())}",
        design="explica",
        **ExplicaDesign().project_defaults(),
    )
    curator, _ = User.objects.get_or_create(username="bench-curator")
    Membership.objects.create(user=curator, project=project, role=Membership.Role.OWNER)
    raters = [User.objects.get_or_create(username=f"bench-rater-{n:02d}")[0] for n in range(n_raters)]
    Membership.objects.bulk_create(
        Membership(user=rater, project=project, role=Membership.Role.ANNOTATOR) for rater in raters
    )
    for n in range(n_pairs):
        explica_pair_add(
            project=project,
            sentence_a=f"A chuva caiu forte na cidade {n}.",
            sentence_b=f"As ruas ficaram alagadas no bairro {n}.",
            external_id=f"P{n:04d}",
        )
    items = list(Item.objects.filter(project=project).order_by("pk"))
    rng = np.random.default_rng(3)
    # Each item has a true acceptability; raters give it within two points, as people do.
    truth = rng.integers(2, 10, len(items))
    now = timezone.now()
    assignments = Assignment.objects.bulk_create(
        (
            Assignment(
                item=item, annotator=rater, round=1, status=Assignment.Status.SUBMITTED, finished_at=now
            )
            for item in items
            for rater in raters
        ),
        batch_size=5000,
    )
    ratings = np.clip(truth[:, None] + rng.integers(-2, 3, (len(items), n_raters)), 1, 10)
    Judgment.objects.bulk_create(
        (
            Judgment(
                item=assignment.item,
                annotator=assignment.annotator,
                assignment=assignment,
                round=1,
                ratings={RATING: int(ratings[index // n_raters, index % n_raters])},
                vote=Judgment.Vote.ACCEPT,
                causal_class=assignment.item.causal_class,
            )
            for index, assignment in enumerate(assignments)
        ),
        batch_size=5000,
    )
    items_recount_rounds(items=items)
    return project, curator, raters


def add_one_judgment(project) -> None:
    """A late rater's judgment of one item: the figures of its round must be computed again."""
    from django.contrib.auth import get_user_model

    from annotation.models import Assignment, Item, Judgment
    from designs.explica.design import RATING

    late, _ = get_user_model().objects.get_or_create(username="bench-rater-late")
    item = Item.objects.filter(project=project).order_by("pk").first()
    assignment = Assignment.objects.create(
        item=item, annotator=late, round=1, status=Assignment.Status.SUBMITTED
    )
    Judgment.objects.create(
        item=item,
        annotator=late,
        assignment=assignment,
        round=1,
        ratings={RATING: 7},
        vote=Judgment.Vote.ACCEPT,
        causal_class=item.causal_class,
    )


def page_seconds(client, url: str) -> float:
    started, cpu = time.perf_counter(), time.process_time()
    response = client.get(url)
    seconds = time.perf_counter() - started
    CPU.append(time.process_time() - cpu)
    assert response.status_code == 200, response.status_code
    return seconds


CPU: list[
    float
] = []  # processor time of each page load, which a busy machine inflates less than the wall clock


def measure(slug: str) -> dict:
    """In a process of its own, as a server worker would be: the page cold, unchanged and after one new judgment,
    then the aggregation; its peak memory is the page's and the aggregation's, not the building's.

    The process starts as the server's workers do, through ``causalqa_site.wsgi``: the application loaded, then
    everything loaded so far frozen out of the garbage collector's full collections (``gc.freeze()``). Without
    that, the first page's full collections walked all of Django and numpy, which no worker's do: the cold page
    took 0.78–0.98 s instead of 0.64–0.72 s (three runs each, alternately)."""
    _django.setup("explica", migrate=False)
    from django.contrib.auth import get_user_model
    from django.core.cache import cache
    from django.test import Client
    from django.urls import reverse

    import causalqa_site.wsgi  # noqa: F401 - the server's start: its application, then gc.freeze()
    from annotation.models import Project
    from designs.explica.aggregation import explica_aggregate

    project = Project.objects.get(slug=slug)
    curator = get_user_model().objects.get(username="bench-curator")
    client = Client()
    client.force_login(curator)
    # A running server has its URLs, views, translations and database connection warm already: a page of the
    # project that computes no agreement (its cache would serve the agreement page) warms them here.
    client.get("/healthz")
    client.get(reverse("annotation:project_detail", args=[project.slug]))
    url = reverse("evaluation:agreement", args=[project.slug])
    cache.clear()
    cold = page_seconds(client, url)
    cold_cpu = CPU[-1]
    warm = min(page_seconds(client, url) for _ in range(3))
    warm_cpu = min(CPU[-3:])
    add_one_judgment(project)
    after_change = page_seconds(client, url)
    after_change_cpu = CPU[-1]
    page_peak_mb = _django.peak_mb()

    started, cpu = time.perf_counter(), time.process_time()
    report = explica_aggregate(project=project, curator=curator)
    aggregate_seconds, aggregate_cpu = time.perf_counter() - started, time.process_time() - cpu
    return {
        "agreement_page_cold_seconds": round(cold, 3),
        "agreement_page_cold_cpu_seconds": round(cold_cpu, 3),
        "agreement_page_unchanged_seconds": round(warm, 4),
        "agreement_page_unchanged_cpu_seconds": round(warm_cpu, 4),
        "agreement_page_after_change_seconds": round(after_change, 3),
        "agreement_page_after_change_cpu_seconds": round(after_change_cpu, 3),
        "aggregation_seconds": round(aggregate_seconds, 3),
        "aggregation_cpu_seconds": round(aggregate_cpu, 3),
        "page_peak_mb": round(page_peak_mb, 1),
        "peak_mb": _django.peak_mb(),
        "labelled": len(report.labelled),
        "ties": len(report.ties),
        "approved_items": report.approved_items,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pairs", type=int, help="600 (150 with --quick)")
    parser.add_argument("--raters", type=int, default=15)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--child", help="measure the project of this slug (the parent built it)")
    args = parser.parse_args()
    if args.child:
        print(json.dumps(measure(args.child)))
        return
    args.pairs = args.pairs or (150 if args.quick else 600)
    load = os.getloadavg()[0]
    _django.setup("explica")
    from django.db import connections

    from annotation.models import Judgment

    started = time.perf_counter()
    project, _curator, _raters = build_project(args.pairs, args.raters)
    setup_seconds = time.perf_counter() - started
    n_judgments = Judgment.objects.filter(item__project=project).count()
    build_peak_mb = _django.peak_mb()
    database = _django.database_label()
    connections.close_all()
    child = subprocess.run(
        [sys.executable, __file__, "--child", project.slug], capture_output=True, text=True, check=True
    )
    figures = json.loads(child.stdout.strip().splitlines()[-1])

    items = args.pairs * 8
    print(
        f"database: {database}; {args.pairs} pairs, {items:,} items × {args.raters} raters = "
        f"{n_judgments:,} judgments (built in {setup_seconds:.1f} s, peak {build_peak_mb:.0f} MB); "
        f"load average {load:.2f}"
    )
    print(
        "agreement page (opens at the design's level, by connective), measured in a process of its own: "
        f"cold {figures['agreement_page_cold_seconds']:.3f} s (CPU {figures['agreement_page_cold_cpu_seconds']:.3f} s), "
        f"nothing changed {figures['agreement_page_unchanged_seconds'] * 1000:.0f} ms "
        f"(CPU {figures['agreement_page_unchanged_cpu_seconds'] * 1000:.0f} ms), after one new judgment "
        f"{figures['agreement_page_after_change_seconds']:.3f} s "
        f"(CPU {figures['agreement_page_after_change_cpu_seconds']:.3f} s); peak memory {figures['page_peak_mb']:.0f} MB"
    )
    print(
        f"aggregation of {n_judgments:,} ratings: {figures['aggregation_seconds']:.3f} s "
        f"(CPU {figures['aggregation_cpu_seconds']:.3f} s; {figures['labelled']} pairs labelled, "
        f"{figures['ties']} tied, {figures['approved_items']:,} items approved); "
        f"peak memory with the page {figures['peak_mb']:.0f} MB"
    )
    print(
        json.dumps(
            {
                "benchmark": "explica",
                "database": database,
                "pairs": args.pairs,
                "items": items,
                "raters": args.raters,
                "judgments": n_judgments,
                "load_average": round(load, 2),
                **{
                    key: value
                    for key, value in figures.items()
                    if key not in ("labelled", "ties", "approved_items")
                },
                "build_peak_mb": round(build_peak_mb, 1),
            }
        )
    )


if __name__ == "__main__":
    main()
