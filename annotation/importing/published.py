"""What a design's reader of its authors' published files reports: records read, items and groups made, the
published fields used and those kept as item metadata, and the rows refused with their reasons.

A reader refuses the whole file when any row is refused (nothing is then written), listing every refused row;
otherwise ``summary()`` says in words what went in."""

from dataclasses import dataclass, field

from .errors import RowError

MAX_SHOWN = 20


@dataclass
class PublishedReport:
    records: int = 0
    groups: int = 0
    items: int = 0
    used: set[str] = field(default_factory=set)  # published fields that became the items' own fields
    kept: set[str] = field(default_factory=set)  # published fields kept as item metadata
    refused: list[RowError] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what the reader noticed (values it kept as they are)
    group_word: str = "groups"
    headline: str = ""  # the design's own words for what went in, said first

    def refuse(self, line: int, field_name: str, reason: str) -> None:
        self.refused.append(RowError(line, field_name, reason))

    def summary(self) -> str:
        counts = f"{self.records} records read; {self.groups} {self.group_word} and {self.items} items added"
        return "; ".join([self.headline or counts, *self.details()])

    def details(self) -> list[str]:
        """What besides the counts the report says: the fields kept as metadata, what the reader noticed."""
        kept = [f"kept as item metadata: {', '.join(sorted(self.kept))}"] if self.kept else []
        return kept + self.notes

    def as_dict(self) -> dict:
        return {
            "records": self.records,
            "groups": self.groups,
            "items": self.items,
            "used_fields": sorted(self.used),
            "kept_fields": sorted(self.kept),
            "refused": [error.as_dict() for error in self.refused],
            "notes": list(self.notes),
            "summary": self.summary(),
        }


class PublishedRowsRefused(ValueError):
    """Rows of a published file were refused: nothing was imported. The message lists them with their reasons."""

    def __init__(self, filename: str, report: PublishedReport):
        self.report = report
        shown = "; ".join(str(error) for error in report.refused[:MAX_SHOWN])
        more = f"; … and {len(report.refused) - MAX_SHOWN} more" if len(report.refused) > MAX_SHOWN else ""
        super().__init__(
            f"{filename}: {len(report.refused)} of {report.records} records refused, nothing was imported: "
            f"{shown}{more}"
        )
