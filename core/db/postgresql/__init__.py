"""Django's PostgreSQL backend, binding parameters on the server (``base.py`` says why and how)."""
