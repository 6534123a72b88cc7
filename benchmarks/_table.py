"""The performance table of the documentation, made from the benchmarks' JSON lines (never written by hand).

    .venv/bin/python benchmarks/_table.py var/bench/<time>-full.jsonl   # take a new run's figures in
    .venv/bin/python scripts/docs_pages.py                              # and rewrite docs/performance.md

``benchmarks/results.jsonl`` keeps one line per benchmark, database and variant: the latest full-size run
(lines written by ``benchmarks/_all.py``; ``--quick`` runs are left out). Each row of the table names the
figure's command and the reference it is compared with.
"""

import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results.jsonl"
PG = "DATABASE_URL=postgres://… "


def key(entry: dict) -> tuple:
    figures = entry.get("figures") or {}
    extra = [part for part in entry["command"].split()[1:] if part != "--quick"]
    return (figures.get("benchmark"), figures.get("database", ""), " ".join(extra))


def load(path: Path) -> dict[tuple, dict]:
    latest: dict[tuple, dict] = {}
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                entry = json.loads(line)
                if (
                    entry.get("returncode") == 0
                    and entry.get("figures")
                    and "--quick" not in entry["command"]
                ):
                    latest[key(entry)] = entry
    return latest


def merge(new_file: Path) -> int:
    """Take a run's full-size lines into results.jsonl, replacing the lines they supersede."""
    latest = load(RESULTS)
    added = load(new_file)
    latest.update(added)
    RESULTS.write_text(
        "".join(json.dumps(e, ensure_ascii=False) + "\n" for e in latest.values()), encoding="utf-8"
    )
    return len(added)


@dataclass
class Row:
    step: str
    benchmark: str
    database: str
    extra: str
    figure: Callable[[dict], str]
    reference: str

    def command(self) -> str:
        prefix = PG if self.database == "postgresql" else ""
        return f"`{prefix}.venv/bin/python benchmarks/{self.benchmark}.py{' ' + self.extra if self.extra else ''}`"


def ms(seconds: float) -> str:
    return f"{1000 * seconds:.0f} ms"


ROWS = (
    [
        Row(
            "import 100,000 questions, whole funnel",
            "import_questions",
            db,
            "",
            lambda f: (
                f"**{f['seconds']:.2f} s** (CPU {f['cpu_seconds']:.2f} s), peak {f['peak_mb']:.0f} MB; "
                f"re-import {f['reimport_seconds']:.2f} s"
            ),
            "≤ 1.4 s",
        )
        for db in ("sqlite", "postgresql")
    ]
    + [
        Row(
            "cut a 100,000-item release",
            "export_release",
            db,
            "",
            lambda f: f"**{f['cut_seconds']:.2f} s**, peak {f['cut_peak_mb']:.0f} MB",
            "≤ 3 s",
        )
        for db in ("sqlite", "postgresql")
    ]
    + [
        Row(
            "zip download of that release, kept / streamed",
            "export_release",
            db,
            "",
            lambda f: (
                f"**{f['kept_zip_seconds']:.3f} s** / **{f['zip_seconds']:.2f} s**; first byte "
                f"{ms(f['kept_zip_first_byte_seconds'])} / {ms(f['zip_first_byte_seconds'])}"
            ),
            "≤ 2.5 s; first byte < 50 ms",
        )
        for db in ("sqlite", "postgresql")
    ]
    + [
        Row(
            "agreement, 100,000 units × 5 raters: no intervals / 1,000 resamples",
            "agreement",
            "",
            "",
            lambda f: (
                f"**{f['seconds']:.2f} s**, peak {f['peak_mb']:.0f} MB / **{f['bootstrap_seconds']:.2f} s**, "
                f"peak {f['bootstrap_peak_mb']:.0f} MB"
            ),
            "< 1 s and < 200 MB / < 3 s",
        ),
        Row(
            "ExpliCa agreement page, 72,000 judgments: cold / unchanged / after one judgment",
            "explica",
            "sqlite",
            "",
            lambda f: (
                f"**{f['agreement_page_cold_seconds']:.2f} s** / **{ms(f['agreement_page_unchanged_seconds'])}** / "
                f"{f['agreement_page_after_change_seconds']:.2f} s"
            ),
            "< 1 s / < 100 ms",
        ),
        Row(
            "ExpliCa aggregation of those ratings",
            "explica",
            "sqlite",
            "",
            lambda f: f"**{f['aggregation_seconds']:.2f} s**",
            "< 1 s",
        ),
        Row(
            "benchmark run, 1 model (ratio of the ideal call rate)",
            "eval_run",
            "",
            "",
            lambda f: f"**{f['ratio']:.2f}**",
            "≥ 0.93",
        ),
        Row(
            "benchmark run, 3 models side by side",
            "eval_run",
            "",
            "--models 3",
            lambda f: f"**{f['ratio']:.2f}**",
            "≥ 0.9",
        ),
        Row(
            "BERTScore, ~100-word answers (pairs/s; an item's 3 answers sharing a reference)",
            "eval_run",
            "",
            "",
            lambda f: (
                f"**{f['bertscore_pairs_per_second']:.1f}** ({f['bertscore_shared_reference_pairs_per_second']:.1f})"
            ),
            "≥ 100 pairs/s",
        ),
        Row(
            "generation job through a real worker, 2,000 calls (ratio of the ideal)",
            "generation_throughput",
            "sqlite",
            "",
            lambda f: f"**{f['ratio']:.3f}**",
            "—",
        ),
        Row(
            "generation job, PostgreSQL with Redis",
            "generation_throughput",
            "postgresql",
            "",
            lambda f: f"**{f['ratio']:.3f}**",
            "—",
        ),
        Row(
            "topic embedding, default model, 10,000 questions",
            "topics",
            "sqlite",
            "",
            lambda f: f"**{f['sizes'][-1]['questions_per_second']:,.0f} questions/s**",
            "≥ 300 questions/s",
        ),
    ]
    + [
        Row(
            "items page, 50 of 100,000 items, worst p95 of 8 filters",
            "items_page",
            db,
            "",
            lambda f: f"**{f['worst_p95_ms']:.0f} ms**",
            "< 200 ms",
        )
        for db in ("sqlite", "postgresql")
    ]
    + [
        Row(
            "annotator's loop: 1 annotator p50 / 20 at once p95 (server)",
            "annotation_loop",
            db,
            extra,
            lambda f: (
                f"**{f['one_annotator']['server_p50_ms']:.2f} ms** / **{f['concurrent']['server_p95_ms']:.2f} ms**, "
                f"{f['errors']} errors"
            ),
            target,
        )
        for db, extra, target in (
            ("sqlite", "", "≤ 5 / 15 ms"),
            ("postgresql", "--seconds 10", "≤ 8 / 20 ms"),
        )
    ]
)


def page(latest: dict[tuple, dict]) -> str:
    lines = [
        "# Performance",
        "",
        "<!-- Made by scripts/docs_pages.py from benchmarks/results.jsonl (benchmarks/_table.py): do not edit. -->",
        "",
        "The latest full-size figures of every benchmark, on a 2-core machine. Each script builds its own data,",
        "prints its figures and ends with one JSON line; `make bench FULL=1` runs them all and writes those lines",
        "to `var/bench/`; `benchmarks/_table.py FILE` takes them into `benchmarks/results.jsonl`, from which",
        "`scripts/docs_pages.py` writes this page. `make bench` runs them at quick sizes in under 5 minutes.",
        "Compare ratios within one run: a shared machine is noisy.",
        "",
        "| step | database | command | figure | reference |",
        "|---|---|---|---|---|",
    ]
    for row in ROWS:
        entry = next(
            (
                e
                for k, e in latest.items()
                if k[0] == row.benchmark and k[2] == row.extra and (not row.database or k[1] == row.database)
            ),
            None,
        )
        figure = row.figure(entry["figures"]) if entry else "not measured yet"
        database = {"sqlite": "SQLite", "postgresql": "PostgreSQL", "": "SQLite"}[row.database]
        lines.append(f"| {row.step} | {database} | {row.command()} | {figure} | {row.reference} |")
    lines += [
        "",
        "How the steps are kept fast is described under [architecture](architecture.md#performance-design).",
    ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    print(f"{merge(Path(sys.argv[1]))} lines taken into {RESULTS.relative_to(HERE.parent)}")
