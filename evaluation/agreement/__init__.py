"""Agreement between raters: the table of judgments, the statistics, their bootstrap intervals."""

from .bootstrap import Bootstrap, Interval
from .statistics import (
    KAPPA_WEIGHTS,
    CohenKappa,
    Estimate,
    PairKappa,
    cohen_kappa,
    fleiss_kappa,
    krippendorff_alpha,
    krippendorff_reading,
    landis_koch,
)
from .summary import METRICS, AgreementSummary, agreement_summary
from .table import LEVELS, AgreementInputError, RatingTable

__all__ = [
    "KAPPA_WEIGHTS",
    "LEVELS",
    "METRICS",
    "AgreementInputError",
    "AgreementSummary",
    "Bootstrap",
    "CohenKappa",
    "Estimate",
    "Interval",
    "PairKappa",
    "RatingTable",
    "agreement_summary",
    "cohen_kappa",
    "fleiss_kappa",
    "krippendorff_alpha",
    "krippendorff_reading",
    "landis_koch",
]
