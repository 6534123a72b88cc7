"""METER: cause–effect entries with three questions each and typed distractors (``design.py``, ``pipeline.py``)."""
