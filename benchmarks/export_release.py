"""Cut a release of 100,000 approved items, export it, download it as a zip while nothing is kept (streamed), keep
its zip as the worker does after a cut, and download it again (the kept file); print speed and peak memory.

    .venv/bin/python benchmarks/export_release.py [--items 100000] [--quick]
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/bench .venv/bin/python benchmarks/export_release.py

The cut, the export (JSONL + CSV + Parquet into a folder), the zip downloads (through the page's view) and the
keeping each run in a fresh child process, so their peak memory is their own. Ends with one JSON line.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import _django

CLASSES = ["associational", "interventional", "counterfactual"]


def build_project(n_items: int):
    from django.contrib.auth import get_user_model
    from django.utils import timezone

    from annotation.models import Item, ItemGroup, Membership, Option, Project
    from core.db.bulk import fast_insert
    from topics.models import Topic

    project = Project.objects.create(name="bench export", slug=f"bench-export-{int(time.time())}")
    user, _ = get_user_model().objects.get_or_create(username="bench-owner")
    Membership.objects.create(user=user, project=project, role=Membership.Role.OWNER)
    topics = [
        Topic.objects.create(project=project, label=label) for label in ("Educação", "Economia", "Animais")
    ]
    groups = ItemGroup.objects.bulk_create(
        ItemGroup(project=project, kind="scenario", external_id=f"g{n}", context=f"Cenário {n}")
        for n in range(2000)
    )
    now = timezone.now()
    answer = "Porque " + " ".join(["o mecanismo causal explica o efeito observado"] * 6) + "."

    def rows():
        for n in range(n_items):
            grouped = n % 10 == 0
            by_model = n % 3 == 0
            yield (
                f"Por que o fenômeno {n} acontece quando a condição {n % 97} muda em {n % 13}?",
                CLASSES[n % 3],
                topics[n % 3].pk,
                groups[(n // 10) % len(groups)].pk if grouped else None,
                f"b{n}",
                f"{n:040x}",
                answer,
                "model" if by_model else "human",
                json.dumps(
                    {"kind": "model", "model": "llama-70b", "template": "answer/class-agnostic v1"}
                    if by_model
                    else {"kind": "human"}
                ),
                json.dumps({"source_row": n}),
            )

    fast_insert(
        Item,
        [
            "question",
            "causal_class",
            "topic_id",
            "group_id",
            "external_id",
            "text_key",
            "reference_answer",
            "answer_by",
            "answer_provenance",
            "metadata",
        ],
        rows(),
        constants={
            "project_id": project.pk,
            "status": Item.Status.APPROVED,
            "round": 1,
            "origin": "natural",
            "context": "",
            "source": "bench",
            "position_in_group": 0,
            "version": 1,
            "created_at": now,
            "updated_at": now,
        },
    )
    mc_ids = list(Item.objects.filter(project=project).values_list("pk", flat=True)[: n_items // 5])
    roles = ["correct", "contradictory", "unfounded", "reversal", "irrelevant"]
    fast_insert(
        Option,
        ["item_id", "text", "role", "rationale", "position"],
        (
            (pk, f"Opção {role}", role, f"Por que {role}", position)
            for pk in mc_ids
            for position, role in enumerate(roles)
        ),
    )
    return project, user


def cpu_seconds() -> float:
    """User + system CPU time of this process so far."""
    import resource

    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def server_cpu_seconds() -> float | None:
    """CPU time so far of every other process on the machine (from /proc/stat, less this process's), or None on
    SQLite, where the database works inside the process. On a quiet machine that is the PostgreSQL server's:
    the backend serving this process's connection and the one a release build opens to stream its records
    (which exits before the figure is read, so its own /proc entry would be gone)."""
    from django.db import connection

    if connection.vendor != "postgresql":
        return None
    try:
        fields = Path("/proc/stat").read_text().splitlines()[0].split()[1:]
    except OSError:
        return None
    user, nice, system, _idle, _iowait, irq, softirq, steal = (int(value) for value in fields[:8])
    busy = (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")
    return busy - cpu_seconds()


def _server_delta(before: float | None) -> float | None:
    after = server_cpu_seconds()
    return None if before is None or after is None else round(after - before, 3)


def child(mode: str, release_id: int, out: str) -> None:
    _django.setup("export", migrate=False)
    from django.contrib.auth import get_user_model
    from django.http import FileResponse
    from django.test import Client

    from annotation.models import Project
    from evaluation.models import Release
    from evaluation.releases.archive import release_archive_store
    from evaluation.releases.export import export_release
    from evaluation.services import release_cut

    figures = {}
    if mode == "cut":  # release_id is the project's id here
        project = Project.objects.get(pk=release_id)
        user = get_user_model().objects.get(username="bench-owner")
        server = server_cpu_seconds()
        started, cpu = time.perf_counter(), cpu_seconds()
        release = release_cut(project=project, user=user)
        figures.update(
            seconds=round(time.perf_counter() - started, 3),
            cpu_seconds=round(cpu_seconds() - cpu, 3),
            server_cpu_seconds=_server_delta(server),
            release=release.pk,
            tag=release.tag,
            checksum=release.checksum,
            peak_mb=_django.peak_mb(),
        )
        print(json.dumps(figures))
        return
    release = Release.objects.select_related("project").get(pk=release_id)
    server = server_cpu_seconds()
    started, cpu = time.perf_counter(), cpu_seconds()
    if mode == "export":
        export_release(release, out)
        figures["bytes"] = sum(path.stat().st_size for path in Path(out).rglob("*") if path.is_file())
    elif mode == "keep":
        figures["bytes"] = release_archive_store(release=release).stat().st_size
    else:
        client = Client()
        client.force_login(get_user_model().objects.get(username="bench-owner"))
        client.get("/healthz")  # a running server has its URLs and views loaded already
        server = server_cpu_seconds()
        started, cpu = time.perf_counter(), cpu_seconds()
        response = client.get(f"/evaluation/p/{release.project.slug}/releases/{release.version}/download.zip")
        size, first = 0, None
        for chunk in response.streaming_content:
            if first is None and chunk:
                first = time.perf_counter() - started
            size += len(chunk)
        figures.update(
            first_byte_seconds=round(first, 3), bytes=size, kept=isinstance(response, FileResponse)
        )
    figures["seconds"] = round(time.perf_counter() - started, 3)
    figures["cpu_seconds"] = round(cpu_seconds() - cpu, 3)
    figures["server_cpu_seconds"] = _server_delta(server)
    figures["peak_mb"] = _django.peak_mb()
    print(json.dumps(figures))


def run_child(mode: str, release_id: int, out: str) -> dict:
    result = subprocess.run(
        [sys.executable, __file__, "--child", mode, "--release", str(release_id), "--out", out],
        capture_output=True,
        text=True,
        env={**os.environ},
    )
    if result.returncode:
        sys.exit(f"the {mode} step failed:\n{result.stderr[-3000:]}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--items", type=int, help="100,000 (10,000 with --quick)")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--child", choices=["cut", "export", "zip", "keep"])
    parser.add_argument("--release", type=int)
    parser.add_argument("--out")
    args = parser.parse_args()
    if args.child:
        child(args.child, args.release, args.out)
        return

    args.items = args.items or (10_000 if args.quick else 100_000)
    archives = tempfile.TemporaryDirectory(prefix="bench-release-zips-")  # the children read the variable
    os.environ["RELEASE_ARCHIVE_DIR"] = archives.name
    _django.setup("export")
    from evaluation.models import Release

    started = time.perf_counter()
    project, _user = build_project(args.items)
    setup_seconds = time.perf_counter() - started
    cut = run_child("cut", project.pk, "-")
    cut_seconds = cut["seconds"]
    release = Release.objects.get(pk=cut["release"])
    try:
        with tempfile.TemporaryDirectory() as out:
            export = run_child("export", release.pk, out)
        zipped = run_child("zip", release.pk, "-")
        keep = run_child("keep", release.pk, "-")
        kept = run_child("zip", release.pk, "-")
    finally:
        release.items.all().delete()
        Release.objects.filter(pk=release.pk).delete()
        project.items.all().delete()
        project.delete()

    n = args.items

    def server(figures: dict) -> str:
        seconds = figures.get("server_cpu_seconds")
        return "" if seconds is None else f", PostgreSQL server CPU {seconds:.2f} s"

    print(f"database: {_django.database_label()}; {n:,} approved items (built in {setup_seconds:.1f} s)")
    print(
        f"cut release {release.tag}: {cut_seconds:.2f} s (CPU {cut['cpu_seconds']:.2f} s{server(cut)}), "
        f"{n / cut_seconds:,.0f} items/s, "
        f"peak memory {cut['peak_mb']:.0f} MB; checksum {cut['checksum']}"
    )
    print(
        f"export JSONL + CSV + Parquet: {export['seconds']:.2f} s (CPU {export['cpu_seconds']:.2f} s{server(export)}), "
        f"{n / export['seconds']:,.0f} items/s, "
        f"{export['bytes'] / 1e6:.0f} MB written, peak memory {export['peak_mb']:.0f} MB"
    )
    print(
        f"zip download (all formats), streamed: first byte after {zipped['first_byte_seconds']:.3f} s, whole zip "
        f"{zipped['seconds']:.2f} s (CPU {zipped['cpu_seconds']:.2f} s{server(zipped)}, {zipped['bytes'] / 1e6:.0f} MB), peak memory {zipped['peak_mb']:.0f} MB"
    )
    print(
        f"zip kept (the worker, after the cut): {keep['seconds']:.2f} s (CPU {keep['cpu_seconds']:.2f} s{server(keep)}), "
        f"peak memory {keep['peak_mb']:.0f} MB"
    )
    print(
        f"zip download, kept: first byte after {kept['first_byte_seconds']:.3f} s, whole zip {kept['seconds']:.3f} s "
        f"(CPU {kept['cpu_seconds']:.2f} s, {kept['bytes'] / 1e6:.0f} MB), peak memory {kept['peak_mb']:.0f} MB"
    )
    assert kept["kept"] and not zipped["kept"], "the second download should send the kept file"
    print(
        json.dumps(
            {
                "benchmark": "export_release",
                "database": _django.database_label(),
                "items": n,
                "cut_seconds": round(cut_seconds, 3),
                "cut_cpu_seconds": cut["cpu_seconds"],
                "cut_server_cpu_seconds": cut["server_cpu_seconds"],
                "cut_peak_mb": cut["peak_mb"],
                "checksum": cut["checksum"],
                "export_seconds": export["seconds"],
                "export_items_per_second": round(n / export["seconds"]),
                "export_cpu_seconds": export["cpu_seconds"],
                "export_server_cpu_seconds": export["server_cpu_seconds"],
                "export_peak_mb": export["peak_mb"],
                "zip_first_byte_seconds": zipped["first_byte_seconds"],
                "zip_seconds": zipped["seconds"],
                "zip_cpu_seconds": zipped["cpu_seconds"],
                "zip_server_cpu_seconds": zipped["server_cpu_seconds"],
                "zip_peak_mb": zipped["peak_mb"],
                "keep_seconds": keep["seconds"],
                "keep_peak_mb": keep["peak_mb"],
                "kept_zip_first_byte_seconds": kept["first_byte_seconds"],
                "kept_zip_seconds": kept["seconds"],
                "kept_zip_peak_mb": kept["peak_mb"],
            }
        )
    )


if __name__ == "__main__":
    main()
