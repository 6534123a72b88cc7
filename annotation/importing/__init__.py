"""Importing source questions (CSV / JSONL) through the Causal_QA.PT preprocessing funnel."""

from .read import ImportFileError, RowError
from .service import ImportRejected, questions_import

__all__ = ["ImportFileError", "ImportRejected", "RowError", "questions_import"]
