"""Causal_QA.PT, the platform's own pipeline (``design.py``)."""
