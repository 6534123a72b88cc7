"""Importing source questions (any tabular file, through a column mapping) and the Causal_QA.PT funnel."""

from .errors import ImportFileError, RowError
from .mapping import Mapping, MappingError, parse_columns, parse_values, propose
from .service import ImportRejected, import_start, imports_resume_stale, questions_import

__all__ = [
    "ImportFileError",
    "ImportRejected",
    "Mapping",
    "MappingError",
    "RowError",
    "import_start",
    "imports_resume_stale",
    "parse_columns",
    "parse_values",
    "propose",
    "questions_import",
]
