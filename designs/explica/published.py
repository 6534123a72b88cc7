"""ExpliCa's pair file as it is published (github.com/martinadh/ExpliCa, ``data/explica/explica.csv``): one row
per pair — ``pair_id``, ``Sentence_A``, ``Sentence_B``, the mean rating per connective type and order
(``rating_iconic_causal`` …), ``human_preferred_connective``, ``human_preferred_connective_desc``,
``additional_dimension`` — or one row per pair and order, the pair id repeated. Read through the import's table
reader (CSV, TSV, XLSX, JSON, JSONL, Parquet) and column names (English or Portuguese, any case), then added
with ``explica_pair_add``: all pairs or none (within the common import, a chunk of pairs per transaction).

Every published column is kept: each row as published (its columns in the file's order, its values as the file
writes them) in the pair's items' metadata (``published_rows``), so a release exports the file again column by
column; the columns that are not the pair, its sentences, its order or its ratings (``additional_dimension``,
the preferred connective…) also as ``published``, by name."""

from collections import OrderedDict

from django.db import transaction

from annotation.importing.mapping import fold
from annotation.importing.service import chunks_commit
from annotation.importing.tables import open_table
from annotation.models import ImportBatch, ItemGroup, Project

from .design import explica_pair_add

KNOWN = {
    "pair": ("pair_id", "id_par", "id_do_par", "pair", "par", "external_id", "id"),
    "sentence_a": ("sentence_a", "frase_a", "sentenca_a", "sentence1", "sentence_1", "s1"),
    "sentence_b": ("sentence_b", "frase_b", "sentenca_b", "sentence2", "sentence_2", "s2"),
    "order": ("order", "ordem", "tested_order", "item_order"),
}
RATING_PREFIXES = ("rating_", "mean_rating_", "nota_", "media_")


class PublishedPairsError(ValueError):
    """What is wrong with the file, naming the row (counted from 1, the header left out)."""


def published_pairs_read(data: bytes, filename: str) -> list[dict]:
    """One entry per pair: ``external_id``, ``sentence_a``, ``sentence_b`` (from its first row), ``ratings``
    ({order: {connective column: mean}}) from every row of the pair. Raises PublishedPairsError."""
    table = open_table(data, filename)
    by_folded = {fold(column): column for column in reversed(table.columns)}
    columns = {
        role: next((by_folded[name] for name in names if name in by_folded), None)
        for role, names in KNOWN.items()
    }
    missing = [role for role in ("sentence_a", "sentence_b") if columns[role] is None]
    if missing:
        raise PublishedPairsError(f"no {' or '.join(missing)} column (found: {', '.join(table.columns)})")
    ratings = [column for column in table.columns if fold(column).startswith(RATING_PREFIXES)]
    used = {column for column in columns.values() if column} | set(ratings)
    extra = [column for column in table.columns if column not in used]
    pairs: OrderedDict[str, dict] = OrderedDict()
    for line, (_file_line, record) in enumerate(table.rows, start=1):  # rows counted from 1, header excluded
        a, b = (str(record.get(columns[role]) or "").strip() for role in ("sentence_a", "sentence_b"))
        pair_id = str(record.get(columns["pair"]) or "").strip() if columns["pair"] else ""
        key = pair_id or f"line-{line}"
        order = str(record.get(columns["order"]) or "").strip() if columns["order"] else ""
        pair = pairs.get(key)
        if pair is None:
            pair = pairs[key] = {
                "external_id": pair_id,
                "sentence_a": a,
                "sentence_b": b,
                "ratings": {},
                "line": line,
                "rows": [],
                "published": {},
            }
        elif {a, b} != {pair["sentence_a"], pair["sentence_b"]}:
            raise PublishedPairsError(
                f"row {line}: pair {pair_id} has other sentences than on row {pair['line']}"
            )
        pair["rows"].append([[column, _as_published(record.get(column))] for column in table.columns])
        for column in extra:
            if record.get(column) not in (None, "") and column not in pair["published"]:
                pair["published"][column] = _as_published(record[column])
        given = {
            fold(column): _number(record.get(column))
            for column in ratings
            if record.get(column) not in (None, "")
        }
        if given:
            pair["ratings"][order or ("ab" if a == pair["sentence_a"] else "ba")] = given
    if table.errors:
        raise PublishedPairsError(str(table.errors[0]))
    return list(pairs.values())


def _as_published(value):
    """A cell's value as the file gives it (text, a number, a date of a spreadsheet as text)."""
    from annotation.importing.read import json_value

    return json_value(value)


def _number(value):
    """A published mean as a number ("8,4" and "8.4" alike); text that is no number is kept as it is."""
    if isinstance(value, (int, float)):
        return value
    try:
        return float(str(value).strip().replace(",", "."))
    except ValueError:
        return value


def published_pairs_import(
    *, project: Project, data: bytes, filename: str, batch: ImportBatch | None = None
) -> list[ItemGroup]:
    """Every pair of the published file, with its published mean ratings kept in the pair's metadata; all or none.

    Within ``batch``, the common import's (claimed for writing), the pairs are written a chunk per transaction
    (``chunks_commit``), unseen by every door until the import finishes, and removed by it if it stops; without,
    in one transaction."""
    pairs = published_pairs_read(data, filename)
    # Pairs any import wrote, finished or not: an id is the project's once (its unique constraint).
    present = set(
        ItemGroup.with_unsettled.filter(
            project=project, external_id__in=[pair["external_id"] for pair in pairs if pair["external_id"]]
        ).values_list("external_id", flat=True)
    )

    def write(chunk: list[dict]) -> list[ItemGroup]:
        return [_pair_add(project, pair, present, batch) for pair in chunk]

    if batch is None:
        with transaction.atomic():
            return write(pairs)
    return chunks_commit(pairs, write)


def _pair_add(project: Project, pair: dict, present: set, batch: ImportBatch | None) -> ItemGroup:
    if pair["external_id"] in present:
        raise PublishedPairsError(f"row {pair['line']}: pair {pair['external_id']} is already in the project")
    metadata = {"published_ratings": pair["ratings"]} if pair["ratings"] else {}
    kept = {"published_rows": pair["rows"], "published_line": pair["line"]}
    if pair["published"]:
        kept["published"] = pair["published"]
    try:
        return explica_pair_add(
            project=project,
            sentence_a=pair["sentence_a"],
            sentence_b=pair["sentence_b"],
            external_id=pair["external_id"],
            metadata={**metadata, **kept},
            item_metadata=kept,
            import_batch=batch,
        )
    except ValueError as exc:
        raise PublishedPairsError(f"row {pair['line']}: {exc}") from exc
