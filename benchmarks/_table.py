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
    # --peer adds a measurement beside the run; the import it times is the plain run's.
    extra = [part for part in entry["command"].split()[1:] if part not in ("--quick", "--peer")]
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


def _peer_figure(f: dict) -> str:
    """The peer's ratio as measured in the same run (``import_questions.py --peer``), or not measured."""
    if f.get("peer_runs_seconds") and f.get("peer_ratio"):
        return f"peer {f['peer_ratio']:.1f}× slower in the same run ({f['peer_seconds']:.1f} s)"
    return "peer not measured in this run"


def _import_figure(f: dict) -> str:
    return (
        f"**{f['floor_ratio']:.1f}× its floor** ({f['seconds']:.2f} s against {f['floor_seconds']:.2f} s, load "
        f"average {f['load_average']:.1f}); {_peer_figure(f)}; peak {_import_peak(f):.0f} MB"
    )


ROWS = (
    [
        Row(
            "import 100,000 questions, whole funnel: time over its floor (same run)",
            "import_questions",
            db,
            "",
            _import_figure,
            "≤ 3× the floor; peer ≥ 10× slower; < 400 MB",
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
    lines += import_section(latest)
    lines += [
        "",
        "How the steps are kept fast is described under [architecture](architecture.md#performance-design).",
    ]
    return "\n".join(lines) + "\n"


def _latest_import(latest: dict[tuple, dict], database: str) -> dict | None:
    return next(
        (
            e["figures"]
            for k, e in latest.items()
            if k[0] == "import_questions" and k[1] == database and not k[2]
        ),
        None,
    )


def _import_peak(figures: dict) -> float:
    """The importing process's peak memory during its imports (not the benchmark's own floor measurement after
    them, which holds every row at once)."""
    return figures.get("peak_import_mb") or figures["peak_mb"]


def _import_minimum(latest: dict[tuple, dict]) -> list[str]:
    """What the import must do at least beyond the floor, from the run shown: whether 3x the floor is
    reachable there at all."""
    lines = [
        "",
        "**What the import cannot do without**, from the run above. On PostgreSQL it writes the same rows",
        "into the same indexes by the same `COPY`, so it takes at least the indexed floor, and it reads, parses",
        "and checks every row of the file (its CPU time, in the importing process), at best beside the server",
        "on the second core. On SQLite the database works inside the importing process: the index upkeep is",
        "part of that CPU time (written from scratch tables, which costs less than the indexed floor's row-by-row",
        "insert, a second thread filling one while the import's connection empties the other into the items",
        "table), so the import takes at least the floor and its CPU time shared by the 2 cores.",
        "",
        "| database | 3× the floor | indexed floor | import's CPU | at least | import | 3× reachable here "
        "| the peer's time ÷ 10 | 10× the peer reachable here |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for database, label in (("sqlite", "SQLite"), ("postgresql", "PostgreSQL")):
        f = _latest_import(latest, database)
        if f is None or f.get("indexed_floor_seconds") is None:
            continue
        target, indexed, cpu = 3 * f["floor_seconds"], f["indexed_floor_seconds"], f["cpu_seconds"]
        # SQLite writes inside the importing process (its CPU time includes the indexes' upkeep): the two
        # cores share that time; PostgreSQL's server writes in a process of its own, beside the funnel.
        least = max(f["floor_seconds"], cpu / 2) if database == "sqlite" else max(indexed, cpu)
        # What sets the minimum: on PostgreSQL the larger of the server's indexed write and the import's CPU.
        bound = (
            "the minimum"
            if database == "sqlite"
            else "the indexed floor"
            if indexed >= cpu
            else "the CPU time"
        )
        reachable = (
            "yes"
            if least <= target
            else f"**no**: {bound} alone is {least / f['floor_seconds']:.1f}× the floor"
        )
        peer = f.get("peer_seconds")
        if peer:
            peer_target = f"{peer / 10:.2f} s"
            peer_reachable = (
                "yes"
                if least <= peer / 10
                else f"**no**: {bound} alone is only {peer / least:.1f}× faster than the peer"
            )
        else:
            peer_target, peer_reachable = "not measured", "—"
        lines.append(
            f"| {label} | {target:.2f} s | {indexed:.2f} s | {cpu:.2f} s | {least:.2f} s | {f['seconds']:.2f} s "
            f"| {reachable} | {peer_target} | {peer_reachable} |"
        )
    lines += [
        "",
        "Where the minimum passes 3× the floor or the peer's time ÷ 10, the indexes the product's queries need",
        "(listed below, each with its query) cost more than the target allows on this machine: the indexed",
        "floor is the same rows written into those indexes by the database's plainest means, which no import",
        "of them can beat. The load average stretches the server's share most, and the peer's time with it:",
        "compare the indexed floor's ratio between runs before the import's.",
    ]
    return lines


def import_section(latest: dict[tuple, dict]) -> list[str]:
    """The import against its floor, the arithmetic from the benchmark's own figures, and the items table's
    indexes with the query each one serves."""
    lines = [
        "",
        "## The import against its floor",
        "",
        "`benchmarks/import_questions.py` times, in the same run and on the same rows, the plainest write the",
        "database has of the items the import made: one `COPY` (PostgreSQL) or one `executemany` (SQLite) into a",
        "copy of the items table without any index or constraint — the **floor** — and the same write into a",
        "copy that has the items table's indexes — the **indexed floor**. `floor_ratio` is the import's time",
        "over the floor. Ratios are compared within one run: on this shared 2-core machine the load average",
        "stretches every figure, and the same import varies by a quarter from one minute to the next, so each",
        "figure is the median of three runs (the import's, each into a new project, and the floors'). With",
        "`--peer` (as `make bench FULL=1` runs it) the peer is measured in the same run, in turn with the import:",
        "Label Studio 1.23.2's own server on SQLite, installed by the benchmark into `var/peer/`, imports the same",
        "questions as tasks through its HTTP API before each of the import's runs, timed until its API counts",
        "every task; the peer's time is the median of its three imports and the ratio is that over the import's",
        "time. Each side starts with what the other wrote on disk.",
        "",
        "| database | import | floor | indexed floor | import / floor | indexed floor / floor | search caught up "
        "(background) | peak memory | peer (same run) | load average |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for database, label in (("sqlite", "SQLite"), ("postgresql", "PostgreSQL")):
        f = _latest_import(latest, database)
        if f is None:
            lines.append(f"| {label} | not measured yet | | | | | | | | |")
            continue
        indexed = f.get("indexed_floor_seconds")
        catch_up = f.get("search_catch_up_seconds")
        lines.append(
            f"| {label} | {f['seconds']:.2f} s | {f['floor_seconds']:.2f} s | "
            + (f"{indexed:.2f} s" if indexed is not None else "—")
            + f" | **{f['floor_ratio']:.1f}×** | "
            + (f"{indexed / f['floor_seconds']:.1f}×" if indexed is not None else "—")
            + " | "
            + (f"{catch_up:.1f} s" if catch_up and database == "postgresql" else "— (nothing deferred)")
            + f" | {_import_peak(f):.0f} MB | "
            + (
                f"{f['peer_seconds']:.1f} s, **{f['peer_ratio']:.1f}×**"
                if f.get("peer_runs_seconds") and f.get("peer_ratio")
                else "not measured"
            )
            + f" | {f['load_average']:.1f} |"
        )
    lines += _import_minimum(latest)
    lines += [
        "",
        "### What is kept out of the import's way",
        "",
        "- **Full-text search (PostgreSQL).** The import writes its items without their Portuguese text vector;",
        "  a background task fills the vectors after the commit, a few thousand items per transaction, under a",
        "  partial GIN index (`WHERE search_vector IS NOT NULL`, `fastupdate` on so each transaction's vectors",
        "  go through the pending list). Until it is done the items page says “indexing N items”, and search",
        "  reads those items' text directly (the primary key from the first id not indexed), so nothing is",
        "  missed. The index over the text expression it replaces cost 5–7 s of the server's time per 85,000",
        "  items inside the import's transaction.",
        "- **Links checked once per import.** An item's project, topic, group and answer author carry no",
        "  database constraint (the import batch never did): each was checked for every row at each commit",
        "  (the project's: 1–2 s of the server's time per 85,000 rows on PostgreSQL; the others' 0.2–0.9 s",
        "  each). The import checks its project once, locked, in the transaction that makes its items",
        "  visible, and removes what it wrote when the project is gone; Django deletes a project's items",
        "  with it and nulls the other links when a topic, group or person is deleted.",
        "- **Writing beside the funnel (PostgreSQL).** Each chunk of items is written by a thread on a",
        "  connection of its own while the funnel checks the next chunk: the server's index upkeep and the",
        "  funnel's Python run on the two cores at once.",
        "- **Filling beside the writing (SQLite).** A second thread reads and checks the rows and puts each",
        "  batch into one of two scratch tables in memory, on a connection of its own, while the import's",
        "  connection moves the batch before from the other table into the items table (a statement that holds",
        "  no Python lock): the funnel, the values' binding and the index upkeep run on the two cores at once.",
        "- **Partial indexes.** Indexes whose queries only look at items a fresh import never has leave those",
        "  items out: the review queue's (complete rounds), a group's items, metadata containment.",
        "",
        "### Indexes of the items table, each with the query that uses it",
        "",
        "| index | columns | the query it answers |",
        "|---|---|---|",
        "| `annotation_item_pkey` | `id` | every item by id; the items page in id order (PostgreSQL); "
        "search over the items not indexed yet (`id >=` the first of them) |",
        "| `item_unique_external_id` | `(project, external_id)` where an id is given | one row per id in a "
        "project (a constraint) |",
        "| `annotation_item_import_batch_id…` | `import_batch` | the import's own take-back of rows over the "
        "length bound and its gold decisions (the batch's items in id order) |",
        "| `annotation_item_topic_id…` | `topic` | the items page's topic filter; a topic's items nulled on "
        "its deletion |",
        "| `item_project_status_round` | `(project, status, round)` | status and round filters; the "
        "dashboard's counts by status and round |",
        "| `item_project_class` | `(project, causal_class)` | the class filter; counts by class |",
        "| `item_project_updated` | `(project, updated_at, id)` | the items page by last change; "
        "“changed after/before” |",
        "| `item_queue_fresh` | `(project, status, created_at, id)` where `round_assigned = 0` | the queue's "
        "fresh items, oldest first |",
        "| `item_queue_fresh_expertise` | `(project, status, expertise tag, created_at, id)` where "
        "`round_assigned = 0` | the queue's passes by expertise tag, and its untagged pass |",
        "| `item_queue_started` | `(project, status, round_assigned)` where `round_assigned > 0` | the queue's "
        "started items, fullest first (empty for an import) |",
        "| `item_review_queue` | `(project, status, round_disagreement desc, id)` where a disagreement is set "
        "| the review queue, most disagreement first (empty for an import) |",
        "| `item_group` | `group` where set | a sibling group's items (CausalityCheck; empty for an import) |",
        "| `item_project_disagreement` (PostgreSQL) | `(project, coalesce(round_disagreement, -1), id)` | the "
        "items page by disagreement |",
        "| `item_metadata` (PostgreSQL, GIN) | `metadata` where not empty | the metadata filter (containment) |",
        "| `item_search` (PostgreSQL, GIN) | `search_vector` where filled | full-text search |",
        "| `item_project_id` (SQLite) | `(project, id)` | the items page in id order |",
    ]
    return lines


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    print(f"{merge(Path(sys.argv[1]))} lines taken into {RESULTS.relative_to(HERE.parent)}")
