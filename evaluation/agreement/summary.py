"""All the statistics of one set of judgments at once, as the command, the page, the API and the card show them."""

from dataclasses import dataclass

from threadpoolctl import threadpool_limits

from .bootstrap import Bootstrap
from .statistics import (
    KAPPA_WEIGHTS,
    CohenKappa,
    Estimate,
    cohen_kappa,
    fleiss_kappa,
    krippendorff_alpha,
)
from .table import LEVELS, AgreementInputError, RatingTable, whole_number_range

METRICS = ("cohen", "fleiss", "krippendorff")


@dataclass
class AgreementSummary:
    n_units: int
    n_raters: int
    n_judgments: int
    level: str
    cohen: CohenKappa | None = None
    fleiss: Estimate | None = None
    krippendorff: Estimate | None = None
    bootstrap: Bootstrap | None = None
    scale: list | None = None  # the ordered values of the scale, used or not
    scale_source: str = ""

    @property
    def scale_text(self) -> str:
        """The scale as a person reads it: 1–5, or the values in order when they are not whole numbers."""
        if not self.scale:
            return ""
        if whole_number_range(self.scale) == self.scale and len(self.scale) > 2:
            return f"{self.scale[0]}–{self.scale[-1]}"
        return ", ".join(map(str, self.scale))

    def as_dict(self) -> dict:
        """Nested: each statistic with its value, interval, reading, units and note."""
        return {
            "n_units": self.n_units,
            "n_raters": self.n_raters,
            "n_judgments": self.n_judgments,
            "level": self.level,
            "scale": self.scale,
            "scale_source": self.scale_source,
            "cohen_kappa": self.cohen.as_dict() if self.cohen else None,
            "fleiss_kappa": self.fleiss.as_dict() if self.fleiss else None,
            "krippendorff_alpha": self.krippendorff.as_dict() if self.krippendorff else None,
            "bootstrap": self.bootstrap.as_dict() if self.bootstrap else None,
        }

    def as_flat_dict(self) -> dict:
        """What ``manage.py agreement --json`` prints: the figures at the top level, details beside them."""
        out: dict = {
            "n_units": self.n_units,
            "n_raters": self.n_raters,
            "n_judgments": self.n_judgments,
            "level": self.level,
            "scale": self.scale,
            "scale_source": self.scale_source,
        }
        if self.fleiss:
            fleiss = self.fleiss.as_dict()
            out.update(
                fleiss_kappa=fleiss["value"],
                fleiss_kappa_ci95=fleiss["ci95"],
                fleiss_kappa_reading=fleiss["reading"],
                fleiss_units_used=fleiss["n_units"],
                fleiss_kappa_note=fleiss["note"],
            )
        if self.krippendorff:
            alpha = self.krippendorff.as_dict()
            out.update(
                krippendorff_alpha=alpha["value"],
                krippendorff_alpha_ci95=alpha["ci95"],
                krippendorff_alpha_reading=alpha["reading"],
                krippendorff_units_used=alpha["n_units"],
                krippendorff_alpha_note=alpha["note"],
            )
        if self.cohen:
            out["cohen_kappa"] = self.cohen.as_dict()
        if self.bootstrap:
            out["bootstrap"] = self.bootstrap.as_dict()
        return out


def agreement_summary(
    table: RatingTable,
    *,
    level: str = "nominal",
    metrics: tuple[str, ...] = METRICS,
    bootstrap: Bootstrap | None = None,
) -> AgreementSummary:
    """Cohen's kappa (weighted by ``level``), Fleiss' kappa (nominal by nature) and Krippendorff's alpha."""
    if level not in LEVELS:
        raise AgreementInputError(f"level must be one of {', '.join(LEVELS)}, not {level!r}")
    unknown = set(metrics) - set(METRICS)
    if unknown:
        raise AgreementInputError(f"unknown metric {', '.join(sorted(unknown))}; use {', '.join(METRICS)}")
    # One BLAS thread: the products here are small and many, and on a busy 2-core machine a second thread
    # waiting for a core made the bootstrap seven times slower.
    with threadpool_limits(limits=1, user_api="blas"):
        return _summary(table, level, metrics, bootstrap)


def _summary(
    table: RatingTable, level: str, metrics: tuple[str, ...], bootstrap: Bootstrap | None
) -> AgreementSummary:
    return AgreementSummary(
        n_units=table.n_units,
        n_raters=table.n_raters,
        n_judgments=table.n_judgments,
        level=level,
        cohen=cohen_kappa(table, weights=KAPPA_WEIGHTS[level], bootstrap=bootstrap)
        if "cohen" in metrics
        else None,
        fleiss=fleiss_kappa(table, bootstrap=bootstrap) if "fleiss" in metrics else None,
        krippendorff=krippendorff_alpha(table, level=level, bootstrap=bootstrap)
        if "krippendorff" in metrics
        else None,
        bootstrap=bootstrap,
        scale=[_plain(value) for value in table.categories],
        scale_source=table.scale_source,
    )


def _plain(value):
    """numpy numbers as Python ones, so the scale serialises as JSON."""
    return value.item() if hasattr(value, "item") else value
