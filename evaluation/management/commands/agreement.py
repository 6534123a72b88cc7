"""``manage.py agreement PATH``: agreement statistics of any long-format CSV (unit,rater,value)."""

import json

from django.core.management.base import BaseCommand, CommandError

from evaluation.agreement import LEVELS, METRICS, AgreementInputError, Bootstrap, agreement_summary
from evaluation.agreement.longcsv import read_long_csv


class Command(BaseCommand):
    help = (
        "Cohen's kappa (each pair and their mean), Fleiss' kappa and Krippendorff's alpha, with seeded "
        "bootstrap 95% intervals, for a CSV with columns unit,rater,value (an empty value is a missing judgment)."
    )

    def add_arguments(self, parser):
        parser.add_argument("path")
        parser.add_argument("--metric", choices=[*METRICS, "all"], default="all")
        parser.add_argument(
            "--level",
            choices=LEVELS,
            default="nominal",
            help="level of measurement: weights Cohen's kappa and sets alpha's distance",
        )
        parser.add_argument(
            "--categories",
            help="comma-separated values in scale order, including unused ones (default for ordinal, interval and "
            "ratio: every whole number from the lowest value to the highest)",
        )
        parser.add_argument(
            "--resamples", type=int, default=1000, help="bootstrap resamples (0: no intervals)"
        )
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--json", action="store_true", help="print one JSON object")

    def handle(self, *args, **options):
        categories = [c.strip() for c in options["categories"].split(",")] if options["categories"] else None
        metrics = METRICS if options["metric"] == "all" else (options["metric"],)
        if options["resamples"] < 0:
            raise CommandError("--resamples must be 0 or more")
        bootstrap = (
            Bootstrap(resamples=options["resamples"], seed=options["seed"]) if options["resamples"] else None
        )
        try:
            table = read_long_csv(options["path"], level=options["level"], categories=categories)
            summary = agreement_summary(table, level=options["level"], metrics=metrics, bootstrap=bootstrap)
        except AgreementInputError as exc:
            raise CommandError(str(exc)) from exc
        if options["json"]:
            self.stdout.write(json.dumps(summary.as_flat_dict(), ensure_ascii=False))
            return
        self.stdout.write(self._text(summary))

    def _text(self, summary) -> str:
        lines = [
            f"{summary.n_units} units, {summary.n_raters} raters, {summary.n_judgments} judgments; "
            f"level: {summary.level}"
            + (
                f"; 95% intervals from {summary.bootstrap.resamples} bootstrap resamples of units "
                f"(seed {summary.bootstrap.seed})"
                if summary.bootstrap
                else ""
            ),
        ]
        if summary.level != "nominal":
            lines.append(f"scale: {summary.scale_text} ({summary.scale_source})")
        if summary.krippendorff:
            lines.append(_line(f"Krippendorff's alpha ({summary.level})", summary.krippendorff.as_dict()))
        if summary.fleiss:
            lines.append(_line("Fleiss' kappa (nominal)", summary.fleiss.as_dict()))
        if summary.cohen:
            cohen = summary.cohen.as_dict()
            weights = f", {cohen['weights']} weights" if cohen["weights"] else ""
            lines.append(_line(f"Cohen's kappa, mean of pairs{weights}", {**cohen, "value": cohen["mean"]}))
            for pair in cohen["pairs"]:
                lines.append(
                    _line(f"  {pair['raters'][0]} × {pair['raters'][1]}", {**pair, "value": pair["kappa"]})
                )
        return "\n".join(lines)


def _line(name: str, figure: dict) -> str:
    if figure["value"] is None:
        return f"{name}: undefined — {figure['note']}"
    text = f"{name}: {figure['value']:.3f}"
    if figure["ci95"]:
        text += f" [{figure['ci95'][0]:.3f}, {figure['ci95'][1]:.3f}]"
    if figure["reading"]:
        text += f" ({figure['reading']})"
    text += f" on {figure['n_units']} units"
    if figure["note"]:
        text += f" — {figure['note']}"
    return text
