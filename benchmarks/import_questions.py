"""Import 100,000 questions through the whole funnel and print rows per second.

    .venv/bin/python benchmarks/import_questions.py [--rows 100000] [--quick] [--format csv|jsonl|xlsx|parquet]
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/bench .venv/bin/python benchmarks/import_questions.py
    .venv/bin/python benchmarks/import_questions.py --megabytes 200 [--format jsonl]   # memory of a large file

The import's time is judged against its floor, measured in the same run on the same rows: the items it
wrote, written again by the plainest means the database has into a copy of the items table without any
index, constraint or trigger — one ``COPY`` on PostgreSQL, one ``executemany`` on SQLite, one transaction
each. ``floor_ratio`` is the import's time over that floor. The import is timed ``--runs`` times (3), each
into a new project, and its time is the median; so are the floors. ``--peer`` measures the peer in the same
run: Label Studio's own server on SQLite (``benchmarks/_peer.py``, installed into ``var/peer/`` by the first
run) imports the same questions as tasks through its HTTP API before each of this import's runs, on the same
machine under the same load; ``peer_seconds`` is the median of its imports and ``peer_ratio`` that over the
import's time. ``--peer-seconds S`` gives a peer's time by hand instead.

``--megabytes N`` writes a file of about N MB to disk (streamed, so building it costs no memory) and imports it
from its path, as the worker does with an upload; the peak resident memory of the process is the figure
(the upload form accepts 200 MB). ``--from-path`` imports the 100,000-row file from disk too.

The file is built here: varied Portuguese questions, with duplicates, non-causal rows,
rows too short and too long, so every step of the funnel has work. Ends with one JSON line.
"""

import argparse
import csv
import io
import json
import os
import random
import statistics
import time

import _django

BENCH_FULL = ["--peer"]  # make bench FULL=1 measures Label Studio's import beside this one
BENCH_BOTH_DATABASES = (
    True  # with DATABASE_URL=postgres://…, make bench runs it on SQLite, then on PostgreSQL
)

STEMS = [
    "Por que {a} aumenta quando {b} diminui em {c}",
    "Se eu {d}, será que {a} melhora em {c}",
    "O que teria acontecido com {a} se {b} não tivesse mudado em {c}",
    "Qual a relação entre {a} e {b} no caso de {c}",
    "Se o governo {d}, o que acontece com {a} em {c}",
]
WORDS_A = [
    "o desemprego",
    "a inflação",
    "a evasão escolar",
    "o salário",
    "a produtividade",
    "a saúde do gato",
]
WORDS_B = ["a taxa de juros", "o investimento", "o preço da ração", "a carga horária", "o número de vagas"]
WORDS_C = ["São Paulo", "Fortaleza", "2020", "universidades públicas", "pequenas empresas", "home office"]
WORDS_D = [
    "estudar à noite",
    "mudar de área",
    "cortar impostos",
    "contratar mais gente",
    "adotar um cachorro",
]
CLASSES = ["associativa", "intervencional", "contrafactual"]


HEADER = ["id", "question", "causal_class", "is_causal", "source", "topic"]


def build_file(rows: int, seed: int = 1, file_format: str = "csv") -> bytes:
    if file_format == "jsonl":
        return b"".join(
            json.dumps(dict(zip(HEADER, row)), ensure_ascii=False).encode() + b"\n"
            for row in build_rows(rows, seed)
        )
    if file_format == "csv":
        buffer = io.StringIO()
        writer = csv.writer(buffer)
        writer.writerow(HEADER)
        writer.writerows(build_rows(rows, seed))
        return buffer.getvalue().encode("utf-8")
    if file_format == "xlsx":
        import openpyxl

        book = openpyxl.Workbook(write_only=True)
        sheet = book.create_sheet("perguntas")
        sheet.append(HEADER)
        for row in build_rows(rows, seed):
            sheet.append(row)
        binary = io.BytesIO()
        book.save(binary)
        return binary.getvalue()
    import pyarrow as pa
    import pyarrow.parquet as pq

    binary = io.BytesIO()
    pq.write_table(pa.Table.from_pylist([dict(zip(HEADER, row)) for row in build_rows(rows, seed)]), binary)
    return binary.getvalue()


def write_file(path, megabytes: float, seed: int = 1, file_format: str = "csv") -> int:
    """Write a file of about ``megabytes`` MB to ``path`` row by row; return its number of rows."""
    target = int(megabytes * 1_000_000)
    rows = 0
    if file_format in ("csv", "jsonl"):
        with open(path, "w", encoding="utf-8", newline="") as handle:
            writer = csv.writer(handle)
            if file_format == "csv":
                writer.writerow(HEADER)
            for row in build_rows(10**9, seed):
                if file_format == "csv":
                    writer.writerow(row)
                else:
                    handle.write(json.dumps(dict(zip(HEADER, row)), ensure_ascii=False) + "\n")
                rows += 1
                if rows % 10_000 == 0 and handle.tell() >= target:
                    break
        return rows
    if file_format == "xlsx":
        import openpyxl

        # The sheet's XML is ~6x the zipped size: rows are estimated from the CSV size of a row.
        count = int(target / 147 * 2.2)
        book = openpyxl.Workbook(write_only=True)
        sheet = book.create_sheet("perguntas")
        sheet.append(HEADER)
        for row in build_rows(count, seed):
            sheet.append(row)
        book.save(path)
        return count
    import pyarrow as pa
    import pyarrow.parquet as pq

    count = int(target / 147 * 4)  # Parquet compresses the repeated words about 4x
    writer = None
    rows_iter = build_rows(count, seed)
    while True:
        batch = [dict(zip(HEADER, row)) for _n, row in zip(range(50_000), rows_iter)]
        if not batch:
            break
        table = pa.Table.from_pylist(batch)
        writer = writer or pq.ParquetWriter(path, table.schema)
        writer.write_table(table)
        rows += len(batch)
    writer.close()
    return rows


def rss_mb() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return round(int(line.split()[1]) / 1024, 1)
    return 0.0


def build_rows(rows: int, seed: int):
    rng = random.Random(seed)
    for n in range(rows):
        roll = rng.random()
        if roll < 0.03:
            question = "Por quê?"  # too short
        elif roll < 0.05:
            question = " ".join(["muito"] * 80) + "?"  # too long
        else:
            stem = rng.choice(STEMS)
            question = stem.format(
                a=rng.choice(WORDS_A), b=rng.choice(WORDS_B), c=rng.choice(WORDS_C), d=rng.choice(WORDS_D)
            )
            question += f" (caso {n if rng.random() > 0.05 else n // 2})?"  # ~5% near-duplicates
        yield [
            f"q{n}",
            question,
            rng.choice(CLASSES),
            "false" if rng.random() < 0.1 else "true",
            rng.choice(["Reddit", "ShareGPT", "WildChat"]),
            rng.choice(["Educação", "Economia", "Animais"]),
        ]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, help="100,000 (10,000 with --quick)")
    parser.add_argument(
        "--megabytes", type=float, help="a file of about this size, on disk, imported from its path"
    )
    parser.add_argument(
        "--from-path", action="store_true", help="import from a file on disk, as the worker does"
    )
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--format", choices=["csv", "jsonl", "xlsx", "parquet"], default="csv")
    parser.add_argument(
        "--peer-seconds", type=float, help="a peer's time for the same file, measured beside this run"
    )
    parser.add_argument("--runs", type=int, help="imports timed, the median reported (3; 1 with --megabytes)")
    parser.add_argument(
        "--peer", action="store_true", help="measure Label Studio's import of the same questions in this run"
    )
    args = parser.parse_args()
    args.rows = args.rows or (10_000 if args.quick else 100_000)
    _django.setup("import")
    import tempfile
    from pathlib import Path

    from annotation.importing import questions_import
    from annotation.models import Project

    filename = f"bench.{args.format}"
    folder = tempfile.TemporaryDirectory(prefix="bench-import-")
    path = None
    if args.megabytes:
        path = Path(folder.name) / filename
        args.rows = write_file(path, args.megabytes, file_format=args.format)
        data, size = None, path.stat().st_size
    else:
        data = build_file(args.rows, file_format=args.format)
        size = len(data)
        if args.from_path:
            path = Path(folder.name) / filename
            path.write_bytes(data)
            data = None
    reimport = not args.megabytes
    runs = args.runs or (1 if args.megabytes else 3)
    peer, peer_runs = None, []
    if args.peer:
        import _peer

        questions = [row[1] for row in build_rows(args.rows, 1)]
        peer = _peer.Server()
    rss_before = rss_mb()
    project, timed = None, []
    try:
        # Turn about, the peer's import then this one, each timed ``runs`` times: each side's figure is the
        # median of its runs, so that one slow moment of a noisy machine moves neither.
        for run in range(runs):
            if peer:
                peer_runs.append(peer.time_import(questions))
            if project is not None:
                _remove(project)
            project = Project.objects.create(name="bench import", slug=f"bench-import-{time.time_ns()}")
            # Each side starts with the other's writes on disk: the peer's 100,000 tasks, written and deleted
            # just before, would otherwise be flushed by the kernel while this import commits.
            os.sync()
            started, cpu_started = time.perf_counter(), time.process_time()
            batch = questions_import(project=project, data=data, path=path, filename=filename)
            timed.append((time.perf_counter() - started, time.process_time() - cpu_started))
            print(f"run {run + 1}: {timed[-1][0]:.2f} s", flush=True)
        seconds, cpu_seconds = sorted(timed)[len(timed) // 2]
        if peer_runs:
            args.peer_seconds = statistics.median(peer_runs)
        peak_import = _django.peak_mb()
        floor_seconds = statistics.median(measure_floor(project) for _run in range(runs))
        indexed_floor_seconds = statistics.median(
            measure_floor(project, indexed=True) for _run in range(runs)
        )
        # The search vectors, filled after the commit by a background task (annotation.search), here in-process.
        from annotation.search import search_catch_up

        catch_up_started = time.perf_counter()
        search_catch_up(project.pk)
        catch_up_seconds = time.perf_counter() - catch_up_started
        again_seconds, again = None, None
        if reimport:
            again_started = time.perf_counter()
            again = questions_import(project=project, data=data, path=path, filename=filename)
            again_seconds = time.perf_counter() - again_started
    finally:
        if peer:
            peer.close()
        if project is not None:
            _remove(project)
        folder.cleanup()
    funnel = batch.funnel
    print(
        f"database: {_django.database_label()}; {args.format} file: {size / 1e6:.1f} MB, {args.rows:,} rows"
    )
    print(
        "funnel: read {read} → causal {causal} → unique {unique} → in length {in_length} → imported {imported}".format(
            **funnel
        )
    )
    # CPU time too: on a shared machine the wall clock measures the neighbours as much as the import.
    print(f"import: {seconds:.2f} s, {args.rows / seconds:,.0f} rows/s; CPU {cpu_seconds:.2f} s")
    floor_ratio = seconds / floor_seconds if floor_seconds else None
    print(
        f"floor: the {funnel['imported']:,} item rows written into an index-free copy of the table in "
        f"{floor_seconds:.2f} s; the import took {floor_ratio:.1f}x its floor"
    )
    print(
        f"the same rows into a copy with the items table's indexes: {indexed_floor_seconds:.2f} s, "
        f"{indexed_floor_seconds / floor_seconds:.1f}x the floor; load average {os.getloadavg()[0]:.2f}"
    )
    print(f"search caught up after the commit (background, PostgreSQL only) in {catch_up_seconds:.2f} s")
    peer_ratio = args.peer_seconds / seconds if args.peer_seconds else None
    if peer_ratio:
        measured = (
            f"Label Studio {_peer_version()}, runs " + ", ".join(f"{r:.2f}" for r in peer_runs)
            if peer_runs
            else "given"
        )
        print(
            f"peer ({measured}): {args.peer_seconds:.2f} s for the same file, {peer_ratio:.1f}x this import's time"
        )
    if again is not None:
        print(f"re-import of the same file: {again_seconds:.2f} s, {again.funnel['imported']} imported")
    print(
        f"memory: {rss_before:.0f} MB before the import, peak {peak_import:.0f} MB during its {runs} run(s); "
        f"peak of the whole run {_django.peak_mb():.0f} MB"
    )
    print(
        json.dumps(
            {
                "benchmark": "import_questions",
                "database": _django.database_label(),
                "format": args.format,
                "rows": args.rows,
                "megabytes": round(size / 1e6, 1),
                "from_path": path is not None,
                "seconds": round(seconds, 3),
                "runs_seconds": [round(run, 3) for run, _cpu in timed],
                "floor_seconds": round(floor_seconds, 3),
                "floor_ratio": round(floor_ratio, 2) if floor_ratio else None,
                "indexed_floor_seconds": round(indexed_floor_seconds, 3),
                "search_catch_up_seconds": round(catch_up_seconds, 3),
                "peer_seconds": round(args.peer_seconds, 3) if args.peer_seconds else None,
                "peer_runs_seconds": [round(run, 3) for run in peer_runs] or None,
                "peer": f"label-studio {_peer_version()}" if peer_runs else None,
                "peer_ratio": round(peer_ratio, 2) if peer_ratio else None,
                "load_average": round(os.getloadavg()[0], 2),
                "cpu_seconds": round(cpu_seconds, 3),
                "rows_per_second": round(args.rows / seconds),
                "imported": funnel["imported"],
                "reimport_seconds": round(again_seconds, 3) if again is not None else None,
                "reimport_imported": again.funnel["imported"] if again is not None else None,
                "rss_before_mb": rss_before,
                "peak_import_mb": peak_import,
                "peak_mb": _django.peak_mb(),
            }
        )
    )


def _peer_version() -> str:
    import _peer

    return _peer.VERSION


def measure_floor(project, indexed: bool = False) -> float:
    """Seconds to write the project's item rows, as imported, into an index-free copy of the items table in
    one transaction: the physical limit an import of those rows could reach on this database.

    ``indexed``: into a copy with the items table's indexes (and, on PostgreSQL, its checks) instead; what the
    import pays above this is its own work (reading, the funnel) and its constraints, not index upkeep."""
    from django.db import connection, transaction

    from annotation.models import Item

    table = connection.ops.quote_name(Item._meta.db_table)
    floor = connection.ops.quote_name("bench_import_floor")
    with connection.cursor() as cursor:
        cursor.execute(f"DROP TABLE IF EXISTS {floor}")
        if connection.vendor == "postgresql":
            like = "INCLUDING ALL" if indexed else "INCLUDING DEFAULTS"
            cursor.execute(f"CREATE TABLE {floor} (LIKE {table} {like})")
            buffer = io.BytesIO()
            with cursor.copy(
                f"COPY (SELECT * FROM {table} WHERE project_id = {int(project.pk)}) TO STDOUT"
            ) as copy:
                for block in copy:
                    buffer.write(block)
            data = buffer.getvalue()
            started = time.perf_counter()
            with transaction.atomic(), cursor.copy(f"COPY {floor} FROM STDIN") as copy:
                for start in range(0, len(data), 1 << 20):
                    copy.write(data[start : start + (1 << 20)])
            seconds = time.perf_counter() - started
        else:
            cursor.execute(f"CREATE TABLE {floor} AS SELECT * FROM {table} WHERE 0")
            if indexed:
                cursor.execute(
                    "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = %s AND sql IS NOT NULL",
                    [Item._meta.db_table],
                )
                for name, sql in cursor.fetchall():
                    cursor.execute(
                        sql.replace(f'"{name}"', f'"floor_{name}"', 1)
                        .replace(f"EXISTS {name} ", f"EXISTS floor_{name} ", 1)
                        .replace(f"INDEX {name} ", f"INDEX floor_{name} ", 1)
                        .replace(f'ON "{Item._meta.db_table}"', f"ON {floor}", 1)
                        .replace(f"ON {Item._meta.db_table} ", f"ON {floor} ", 1)
                    )
            cursor.execute(f"SELECT * FROM {table} WHERE project_id = %s", [project.pk])
            rows = cursor.fetchall()
            marks = ", ".join("?" for _column in cursor.description)
            raw = connection.connection
            started = time.perf_counter()
            with transaction.atomic():
                raw.executemany(f"INSERT INTO {floor} VALUES ({marks})", rows)
            seconds = time.perf_counter() - started
        cursor.execute(f"DROP TABLE {floor}")
    return seconds


def _remove(project) -> None:
    """The benchmark's rows, deleted in SQL: Django's delete() would load 1.4 million items to cascade."""
    from django.db import connection, transaction

    from annotation.models import DroppedRow, ImportBatch, Item
    from topics.models import Topic

    with transaction.atomic(), connection.cursor() as cursor:
        for model, column, value in (
            (Item, "project_id", project.pk),
            (DroppedRow, "batch_id", None),
            (ImportBatch, "project_id", project.pk),
            (Topic, "project_id", project.pk),
        ):
            table = connection.ops.quote_name(model._meta.db_table)
            if value is None:
                batches = connection.ops.quote_name(ImportBatch._meta.db_table)
                cursor.execute(
                    f"DELETE FROM {table} WHERE batch_id IN (SELECT id FROM {batches} WHERE project_id = %s)",
                    [project.pk],
                )
            else:
                cursor.execute(f"DELETE FROM {table} WHERE {column} = %s", [value])
    project.delete()


if __name__ == "__main__":
    main()
