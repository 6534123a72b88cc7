"""CausalBench: scenarios of four yes/no questions (``design.py``), the answer check (``checks.py``), its jobs."""
