"""``manage.py agreement`` on 100,000 units × 5 raters (1–5 ratings, a few skipped): time and peak memory.

    .venv/bin/python benchmarks/agreement.py [--units 100000] [--raters 5] [--resamples 1000]

Writes a long-format CSV (unit,rater,value) of correlated ratings, then runs the command in a fresh child
process twice, without intervals (``--resamples 0``) and with the default bootstrap, each its own process so
its peak memory is its own. "command" is the time inside the command (reading the file and every statistic);
"process" adds starting Python and Django; "CPU" is the command's processor time, which a busy machine
inflates less than the wall clock. Ends with one JSON line.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from io import StringIO
from pathlib import Path

import _django
import numpy as np


def write_judgments(path: Path, n_units: int, n_raters: int, seed: int = 7) -> int:
    """Each unit has a true value 1–5; a rater gives it, or one off, and skips 2% of the units."""
    rng = np.random.default_rng(seed)
    truth = rng.integers(1, 6, n_units)
    lines = ["unit,rater,value"]
    for rater in range(n_raters):
        noise = rng.choice([-1, 0, 0, 0, 1], size=n_units)
        values = np.clip(truth + noise, 1, 5)
        skipped = rng.random(n_units) < 0.02
        lines += [
            f"item-{unit},annotator-{rater},{'' if skipped[unit] else values[unit]}"
            for unit in range(n_units)
        ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return n_units * n_raters


def child(path: str, resamples: int) -> None:
    _django.setup("agreement", migrate=False)
    from django.core.management import call_command

    started, cpu = time.perf_counter(), time.process_time()
    out = StringIO()
    call_command("agreement", path, "--level", "ordinal", "--resamples", str(resamples), "--json", stdout=out)
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    result = json.loads(out.getvalue())
    print(
        json.dumps(
            {
                "seconds": round(seconds, 3),
                "cpu_seconds": round(cpu, 3),
                "peak_mb": _django.peak_mb(),
                "alpha": result["krippendorff_alpha"],
                "alpha_ci95": result["krippendorff_alpha_ci95"],
                "fleiss": result["fleiss_kappa"],
                "cohen_mean": result["cohen_kappa"]["mean"],
            }
        )
    )


def run_child(path: Path, resamples: int) -> dict:
    started = time.perf_counter()
    result = subprocess.run(
        [sys.executable, __file__, "--child", str(path), "--resamples", str(resamples)],
        capture_output=True,
        text=True,
        env={**os.environ},
        check=True,
    )
    figures = json.loads(result.stdout.strip().splitlines()[-1])
    figures["process_seconds"] = round(time.perf_counter() - started, 3)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--units", type=int, help="100,000 (20,000 with --quick)")
    parser.add_argument("--raters", type=int, default=5)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--child")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    args.units = args.units or (20_000 if args.quick else 100_000)
    if args.child:
        child(args.child, args.resamples)
        return

    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "judgments.csv"
        n_judgments = write_judgments(path, args.units, args.raters)
        plain = run_child(path, 0)
        intervals = run_child(path, args.resamples)
    print(
        f"{args.units:,} units × {args.raters} raters ({n_judgments:,} rows), ordinal 1–5; load average {load:.2f}"
    )
    print(
        f"no intervals: command {plain['seconds']:.2f} s, CPU {plain['cpu_seconds']:.2f} s "
        f"(process {plain['process_seconds']:.2f} s), "
        f"peak memory {plain['peak_mb']:.0f} MB; α {plain['alpha']}, Fleiss' κ {plain['fleiss']}, "
        f"mean Cohen's κ {plain['cohen_mean']}"
    )
    print(
        f"{args.resamples} bootstrap resamples: command {intervals['seconds']:.2f} s, "
        f"CPU {intervals['cpu_seconds']:.2f} s "
        f"(process {intervals['process_seconds']:.2f} s), peak memory {intervals['peak_mb']:.0f} MB; "
        f"α 95% interval {intervals['alpha_ci95']}"
    )
    print(
        json.dumps(
            {
                "benchmark": "agreement",
                "units": args.units,
                "raters": args.raters,
                "judgments": n_judgments,
                "load_average": round(load, 2),
                "seconds": plain["seconds"],
                "cpu_seconds": plain["cpu_seconds"],
                "process_seconds": plain["process_seconds"],
                "peak_mb": plain["peak_mb"],
                "bootstrap_resamples": args.resamples,
                "bootstrap_seconds": intervals["seconds"],
                "bootstrap_cpu_seconds": intervals["cpu_seconds"],
                "bootstrap_process_seconds": intervals["process_seconds"],
                "bootstrap_peak_mb": intervals["peak_mb"],
            }
        )
    )


if __name__ == "__main__":
    main()
