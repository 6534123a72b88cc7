"""Benchmark runs: models answer a release split, a judge scores and ranks, metrics and reports follow.

``conditions`` (what each answer format may be asked under), ``choices`` (reading a letter or
yes/no from an answer), ``work`` (the generation-job kinds a run's calls go through),
``services`` (create, run, cancel, resume), ``bertscore``, ``metrics`` (pure figures),
``report`` (tables and plots of one or several runs) and ``export`` (JSONL).
"""
