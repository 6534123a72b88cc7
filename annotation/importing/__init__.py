"""Importing source questions (any tabular file, through a column mapping) and the Causal_QA.PT funnel."""

from .errors import ImportFileError, RowError
from .mapping import Mapping, MappingError, parse_columns, parse_values, propose
from .service import ImportRejected, questions_import

__all__ = ["ImportFileError", "ImportRejected", "Mapping", "MappingError", "RowError", "parse_columns",
           "parse_values", "propose", "questions_import"]
