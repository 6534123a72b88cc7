"""ExpliCa: sentence pairs rated by many people (``design.py``) and their aggregation (``aggregation.py``)."""
