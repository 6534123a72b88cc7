"""Benchmarks: each script builds its own data, prints its figures and ends with one JSON line.

How ``make bench`` finds them (``benchmarks/_all.py``): every ``benchmarks/*.py`` whose name does not start
with ``_`` and that accepts ``--quick`` is run, one after the other, in a fresh process:

- ``make bench`` passes ``--quick``: smaller sizes, the whole set in under 5 minutes (for a pull request);
- ``make bench FULL=1`` passes nothing: the sizes of the README's performance table.

A script that should run more than once names its extra argument lists in a module-level constant,
``BENCH_VARIANTS = [["--models", "3"]]`` (each is run in addition to the plain run); arguments the plain run
takes only at full size, in ``BENCH_FULL = ["--peer"]`` (the import measures its peer then). Scripts that measure a
step a user waits for on a large set (import, release cut, export, agreement) report their peak resident
memory as ``peak_mb`` (or ``<step>_peak_mb``) in that JSON line, from ``_django.peak_mb()``.
``DATABASE_URL`` is passed on, so ``make bench DATABASE_URL=postgres://…/bench18`` measures PostgreSQL; a
script with ``BENCH_BOTH_DATABASES = True`` (the import, judged against each database's floor) then runs on
its own SQLite file first and on PostgreSQL after, so that one run prints both.
"""
