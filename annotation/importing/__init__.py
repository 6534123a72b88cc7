"""Importing source questions (CSV / JSONL) through the Causal_QA.PT preprocessing funnel."""

from .read import ImportFileError, RowError
from .service import ImportRejected, import_start, imports_resume_stale, questions_import

__all__ = [
    "ImportFileError", "ImportRejected", "RowError", "import_start", "imports_resume_stale", "questions_import",
]
