"""The benchmark designs the platform serves, one package each.

Each package (``designs.<key>``) is a Django app holding everything of one design: its ``ProjectDesign``
(registered with ``annotation.designs``), its item creation and invariant checks, its job kinds and their
forms (registered with ``generation``), its pages and urls, its export files, its templates and its example
data (``data/``). Shared code never imports these packages: it asks the registries.
"""
