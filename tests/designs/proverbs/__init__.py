"""Provérbios: a sixth design that lives only in the tests, a whole design app in one package (see
``tests/designs/test_sixth_design.py``)."""
