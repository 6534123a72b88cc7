"""CausalityCheck: seeds and their 36-item checklists (``design.py``, ``seeds.py``, ``checks.py``), its job."""
