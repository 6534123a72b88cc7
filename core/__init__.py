"""The platform under every app: what any app needs and no app owns.

Background-work lifecycle, domain errors and their HTTP answers, database access that depends on the
vendor or on Django's internals (``core.db``), the API's base classes and tokens (``core.api``), the
polling answer and the CSV writer. ``core`` imports no app; every app may import it.
"""
