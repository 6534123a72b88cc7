"""CausalityCheck's multiple-choice seeds as they are published (``dataset/origin dataset/CausalProbe-H.json``,
a JSON array with lower-case keys; paper, section 2.3 and appendix J): a context, a question, four choices and the
answer's number —

    Context, Question, Choice_1, Choice_2, Choice_3, Choice_4, Answer (1–4, or the letter A–D)

with, where given, an id and the seed's reasoning chain ("A → B → C", stored as its correct causal chain).
Read through the import's table reader (CSV, TSV, XLSX, JSONL, Parquet; column names in any case). Each row
becomes a seed (``seed_create``); a row that also brings every other ingredient (the example file's names:
entity, invented_entity, corrupted_chain, ...) is derived into its 36 task × variant items at once, the others
wait for the checklist job to write what they lack. Any other field is kept in the seed's metadata
(``published``). All seeds or none. The 16 published test cells are read by ``cells``."""

from django.db import transaction

from annotation.importing.mapping import fold
from annotation.importing.published import MAX_SHOWN, PublishedReport, PublishedRowsRefused
from annotation.importing.tables import open_table
from annotation.models import ItemGroup, Project

from .seeds import INGREDIENTS, LETTERS, SeedData, SeedInvalid, seed_create, seed_derive

CHOICES = ("choice_1", "choice_2", "choice_3", "choice_4")
CHAIN_COLUMNS = ("causal_chain", "reasoning_chain", "chain", "reasoning")
ID_COLUMNS = ("id", "external_id", "seed_id", "seed")


def is_published_seeds(columns: list[str]) -> bool:
    """Whether a table has the published layout (four Choice_n columns); other files go through the common
    import."""
    folded = {fold(column) for column in columns}
    return all(choice in folded for choice in CHOICES)


class SeedsRefused(PublishedRowsRefused, SeedInvalid):
    """Rows of a published seeds file were refused: nothing was imported. The message lists every one by its
    row (counted from 1, the header left out); ``report`` has them with their reasons."""

    def __init__(self, filename: str, report: PublishedReport):
        self.report = report
        shown = "; ".join(f"row {error.line}: {error.reason}" for error in report.refused[:MAX_SHOWN])
        more = f"; … and {len(report.refused) - MAX_SHOWN} more" if len(report.refused) > MAX_SHOWN else ""
        ValueError.__init__(
            self,
            f"{filename}: {len(report.refused)} of {report.records} seeds refused, nothing was imported: "
            f"{shown}{more}",
        )


def published_seed_specs(data: bytes, filename: str, report: PublishedReport) -> list[tuple[int, dict]]:
    """One seed spec per row (the shape ``seed_create`` takes), with its row; a row that does not fit goes in
    ``report`` with its reason. Raises SeedInvalid for a file without the layout's columns."""
    table = open_table(data, filename)
    columns = {fold(column): column for column in reversed(table.columns)}
    missing = [name for name in ("context", "question", *CHOICES, "answer") if name not in columns]
    if missing:
        raise SeedInvalid(
            f"{filename}: missing column(s) {', '.join(missing)} (found: {', '.join(table.columns)})"
        )
    id_column = next((columns[name] for name in ID_COLUMNS if name in columns), None)
    chain_column = next((columns[name] for name in CHAIN_COLUMNS if name in columns), None)
    used = {
        columns[name] for name in ("context", "question", *CHOICES, "answer", *INGREDIENTS) if name in columns
    }
    used.update(column for column in (id_column, chain_column) if column)
    report.used.update(used)
    specs, rows_of_id = [], {}
    for row, (_line, record) in enumerate(table.rows, start=1):  # rows counted from 1, the header left out
        report.records += 1
        answer = _answer_index(record.get(columns["answer"]))
        if answer is None:
            report.refuse(
                row, "", f"answer must be 1, 2, 3 or 4 (or A to D), not {record.get(columns['answer'])!r}"
            )
            continue
        spec = {
            "external_id": str(record.get(id_column) or "").strip() if id_column else "",
            "context": _text(record.get(columns["context"])),
            "question": _text(record.get(columns["question"])),
            "options": [_text(record.get(columns[choice])) for choice in CHOICES],
            "answer_index": answer,
        }
        spec["external_id"] = spec["external_id"] or f"{filename.rsplit('.', 1)[0]}-{row}"
        for name in INGREDIENTS:
            if name in columns and record.get(columns[name]) not in (None, ""):
                spec[name] = record[columns[name]]
        if chain_column and "causal_chain" not in spec and _text(record.get(chain_column)):
            spec["causal_chain"] = _text(record.get(chain_column))
        kept = {  # the record's own keys: a key the first records, which named the columns, lack is kept too
            column: value
            for column, value in record.items()
            if column not in used and value not in (None, "")
        }
        if kept:
            spec["published"] = kept
            report.kept.update(kept)
        try:
            SeedData.from_dict(spec, where=f"row {row}")
        except SeedInvalid as exc:
            report.refuse(row, "", str(exc).removeprefix(f"row {row}: "))
            continue
        if spec["external_id"] in rows_of_id:
            report.refuse(
                row,
                "",
                f"the project already has a seed with this id (row {rows_of_id[spec['external_id']]})",
            )
            continue
        rows_of_id[spec["external_id"]] = row
        specs.append((row, spec))
    report.refused.extend(table.errors)
    if not report.records and not report.refused:
        raise SeedInvalid(f"{filename}: the file has no seeds")
    return specs


def _text(value) -> str:
    return "" if value is None else str(value).strip()


def _answer_index(value) -> int | None:
    """The correct choice's place: the paper writes its number (1–4); a letter A–D or "Choice_3" also do."""
    text = fold(_text(value).removesuffix(".0")).removeprefix("choice_").upper()  # 3.0: a spreadsheet's 3
    if text in ("1", "2", "3", "4"):
        return int(text) - 1
    return LETTERS.index(text) if text in LETTERS else None


@transaction.atomic
def published_seeds_import(
    *, project: Project, data: bytes, filename: str, report: PublishedReport | None = None
) -> tuple[list[ItemGroup], int]:
    """Every seed of the published file; returns the seeds and how many items were derived at once. All or
    none: ``SeedsRefused`` lists every row refused. ``report``, when given, gets the counts and the fields."""
    report = report if report is not None else PublishedReport(group_word="seeds")
    specs = published_seed_specs(data, filename, report)
    taken = set(
        ItemGroup.objects.filter(
            project=project, external_id__in=[spec["external_id"] for _row, spec in specs]
        ).values_list("external_id", flat=True)
    )
    for row, spec in specs:
        if spec["external_id"] in taken:
            report.refuse(row, "", "the project already has a seed with this id")
    report.refused.sort(key=lambda error: error.line)
    if report.refused:
        raise SeedsRefused(filename, report)
    seeds, derived = [], 0
    for row, spec in specs:
        group = seed_create(project=project, spec=spec, where=f"row {row}")
        kept = {"published": spec["published"]} if spec.get("published") else {}
        group.metadata = {**group.metadata, "source": "causalitycheck:published", **kept}
        group.save(update_fields=["metadata"])
        if not [name for name in INGREDIENTS if name not in spec]:
            try:
                derived += len(seed_derive(group=group))
            except SeedInvalid as exc:
                raise SeedInvalid(f"row {row}: {exc}") from exc
        seeds.append(group)
    report.groups, report.items = len(seeds), derived
    return seeds, derived
