"""Run every benchmark (see ``benchmarks/__init__.py`` for the convention) and collect their JSON lines.

    .venv/bin/python benchmarks/_all.py            # quick: --quick to each, under 5 minutes
    .venv/bin/python benchmarks/_all.py --full     # the sizes of the README's table

Prints each script's output as it comes, then a summary; writes every JSON line, with the date, the
command and the load average when it started, to var/bench/<UTC time>.jsonl.
"""

import argparse
import ast
import datetime
import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def scripts() -> list[Path]:
    """The benchmarks that follow the convention: not private, and accepting ``--quick``."""
    return [
        path
        for path in sorted(HERE.glob("*.py"))
        if not path.name.startswith("_") and '"--quick"' in path.read_text(encoding="utf-8")
    ]


def _constant(path: Path, name: str, default):
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == name for t in node.targets):
            return ast.literal_eval(node.value)
    return default


def variants(path: Path, full: bool = False) -> list[list[str]]:
    """The plain run, then each argument list of the script's ``BENCH_VARIANTS``; at full size the plain
    run takes the script's ``BENCH_FULL`` arguments too (the import's peer, measured in the same run)."""
    return [_constant(path, "BENCH_FULL", []) if full else [], *_constant(path, "BENCH_VARIANTS", [])]


def databases(path: Path) -> list[dict]:
    """The environments to run ``path`` in: as given; and, for a script with ``BENCH_BOTH_DATABASES`` when
    ``DATABASE_URL`` names PostgreSQL, first on its own SQLite file (``DATABASE_URL`` left out) and then on
    PostgreSQL, so that one ``make bench`` compares the two."""
    environment = dict(os.environ)
    given = environment.get("DATABASE_URL", "")
    if not _constant(path, "BENCH_BOTH_DATABASES", False) or not given.startswith(("postgres", "postgresql")):
        return [environment]
    on_sqlite = {name: value for name, value in environment.items() if name != "DATABASE_URL"}
    return [on_sqlite, environment]


def last_json(output: str) -> dict | None:
    for line in reversed(output.strip().splitlines()):
        if line.startswith("{"):
            try:
                return json.loads(line)
            except ValueError:
                return None
    return None


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--full", action="store_true", help="the table's sizes instead of --quick")
    parser.add_argument("--only", nargs="*", default=[], help="names of scripts to run (default: all)")
    args = parser.parse_args()
    out_dir = HERE.parent / "var" / "bench"
    out_dir.mkdir(parents=True, exist_ok=True)
    started_at = datetime.datetime.now(datetime.UTC)
    log = out_dir / f"{started_at:%Y%m%dT%H%M%SZ}{'-full' if args.full else ''}.jsonl"
    summary, failed = [], []
    for path in scripts():
        if args.only and path.stem not in args.only:
            continue
        for environment, extra in [(e, x) for e in databases(path) for x in variants(path, args.full)]:
            command = [
                sys.executable,
                str(path.relative_to(HERE.parent)),
                *extra,
                *([] if args.full else ["--quick"]),
            ]
            load = os.getloadavg()[0]
            on = "" if environment.get("DATABASE_URL") else "  [SQLite]"
            print(f"\n== {' '.join(command[1:])}{on}  (load average {load:.2f})", flush=True)
            began = time.perf_counter()
            result = subprocess.run(
                command, cwd=HERE.parent, capture_output=True, text=True, env=environment, check=False
            )
            seconds = time.perf_counter() - began
            print(result.stdout, end="", flush=True)
            figures = last_json(result.stdout)
            if result.returncode or figures is None:
                failed.append(path.name)
                print(result.stderr[-3000:], file=sys.stderr)
            entry = {
                "command": " ".join(command[1:]),
                "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
                "load_average_at_start": round(load, 2),
                "wall_seconds": round(seconds, 1),
                "returncode": result.returncode,
                "figures": figures,
            }
            with log.open("a", encoding="utf-8") as fh:
                fh.write(json.dumps(entry, ensure_ascii=False) + "\n")
            summary.append(entry)
    print(
        f"\n{len(summary)} runs in {(datetime.datetime.now(datetime.UTC) - started_at).total_seconds():.0f} s; "
        f"figures in {log.relative_to(HERE.parent)}"
    )
    for entry in summary:
        print(
            f"  {entry['wall_seconds']:>6.1f} s  load {entry['load_average_at_start']:>5.2f}  {entry['command']}"
            + ("" if entry["returncode"] == 0 else "  FAILED")
        )
        figures = entry["figures"] or {}
        if figures.get("floor_ratio"):
            # The import's time as a multiple of its floor, measured in the same run on the same database.
            print(
                f"           {figures['benchmark']} on {figures.get('database', '?')}: {figures['floor_ratio']:.1f}x "
                f"its floor ({figures['seconds']:.2f} s against {figures['floor_seconds']:.2f} s), "
                f"load average {figures.get('load_average', entry['load_average_at_start']):.2f}"
                + (
                    f"; the peer {figures['peer_ratio']:.1f}x slower ({figures['peer_seconds']:.2f} s)"
                    if figures.get("peer_ratio")
                    else ""
                )
            )
    given = os.environ.get("DATABASE_URL", "")
    if not given.startswith(("postgres", "postgresql")):
        both = [path.name for path in scripts() if _constant(path, "BENCH_BOTH_DATABASES", False)]
        if both and (not args.only or set(args.only) & {name.removesuffix(".py") for name in both}):
            print(
                f"  {', '.join(both)} ran on SQLite only; with DATABASE_URL=postgres://…/bench "
                "it runs on SQLite, then on PostgreSQL"
            )
    if failed:
        sys.exit(f"failed: {', '.join(failed)}")


if __name__ == "__main__":
    main()
