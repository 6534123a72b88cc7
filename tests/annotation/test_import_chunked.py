"""The chunked import (streamed rows, keys looked up in sorted digests, each chunk's items written as it is
read, rows over the upper length bound taken back out at the end) gives what a one-pass import gives, which
reads the whole file and plans it at once: the same funnel counts, the same dropped rows and the same items,
on the same data. The one-pass planning is written out below as the reference, simple enough to read."""

import csv
import io
import json
import random
from collections import Counter

import pytest
from django.db import connection

from annotation.importing import ImportRejected, questions_import
from annotation.importing import service as import_service
from annotation.importing.errors import RowError
from annotation.importing.funnel import length_bounds, text_key, word_count
from annotation.importing.mapping import propose
from annotation.importing.read import LabelResolver, SourceRow, UnknownValues
from annotation.importing.service import FIELD_LIMITS
from annotation.importing.tables import open_table
from annotation.models import CurationDecision, DroppedRow, ImportBatch, Item, Project
from tests.annotation.import_rows import read_rows
from topics.models import Topic

pytestmark = pytest.mark.django_db
Stage = DroppedRow.Stage
HEADER = ["id", "question", "causal_class", "is_causal", "topic"]


def mixed_rows(count: int, seed: int, id_prefix: str = "q") -> list[list[str]]:
    """Portuguese and English questions with every fate: duplicates by text (also far apart, so in other
    chunks) and by id, too short, too long, not causal, invalid (no question, unknown class, bad boolean)."""
    rng = random.Random(seed)
    rows = []
    for n in range(count):
        roll = rng.random()
        if roll < 0.05:
            question = rng.choice(["Por quê?", "Why?", "E daí?"])
        elif roll < 0.08:
            question = " ".join(["muito"] * rng.randint(40, 90)) + "?"
        elif roll < 0.2 and rows:
            question = rng.choice(rows)[1].upper() + " !"  # the same text once normalised, maybe chunks away
        elif roll < 0.6:
            question = f"Por que a inflação sobe quando os juros caem no caso {rng.randint(0, count)}?"
        else:
            question = f"Why does unemployment rise when wages fall in case {rng.randint(0, count)}?"
        row_id = f"{id_prefix}{n}" if rng.random() > 0.05 else f"{id_prefix}{rng.randint(0, n)}"
        if rng.random() < 0.1:
            row_id = ""
        causal = rng.choice(["true", "true", "true", "false", "", "sim", "no"])
        label = rng.choice(["associational", "interventional", "contrafactual", "", "Associativa"])
        if rng.random() < 0.02:
            question = ""  # invalid
        if rng.random() < 0.01:
            label = "talvez"  # invalid
        if rng.random() < 0.01:
            causal = "perhaps"  # invalid
        rows.append([row_id, question, label, causal, rng.choice(["Economia", "Educação", "", "Animals"])])
    return rows


def as_csv(rows) -> bytes:
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(HEADER)
    writer.writerows(rows)
    return buffer.getvalue().encode("utf-8")


def as_jsonl(rows) -> bytes:
    return "".join(json.dumps(dict(zip(HEADER, row)), ensure_ascii=False) + "\n" for row in rows).encode()


def as_parquet(rows) -> bytes:
    import pyarrow as pa
    import pyarrow.parquet as pq

    binary = io.BytesIO()
    pq.write_table(pa.Table.from_pylist([dict(zip(HEADER, row)) for row in rows]), binary)
    return binary.getvalue()


def as_xlsx(rows) -> bytes:
    import openpyxl

    book = openpyxl.Workbook(write_only=True)
    sheet = book.create_sheet("perguntas")
    sheet.append(HEADER)
    for row in rows:
        sheet.append(row)
    binary = io.BytesIO()
    book.save(binary)
    return binary.getvalue()


WRITERS = {"csv": as_csv, "jsonl": as_jsonl, "parquet": as_parquet, "xlsx": as_xlsx}


def one_pass_import_plan(project, data: bytes, filename: str):
    """The funnel and dropped rows of a one-pass import (the whole file read, then planned at once): the reference."""
    table = open_table(data, filename)
    mapping = propose(table.columns, project.import_mapping)
    errors = table.errors
    unknown = UnknownValues()
    rows = read_rows(
        table.rows,
        table.columns,
        mapping,
        LabelResolver(project.label_set, mapping.values.get("causal_class")),
        errors,
        unknown,
    )
    rows, errors = _within_field_limits(rows, errors)
    errors.sort(key=lambda error: error.line)
    plan = _one_pass_plan(project, rows, errors, True)
    if unknown.by_field:
        plan.funnel["unknown_values"] = unknown.as_dict()
    return plan


def stored_dropped(batch) -> list[tuple]:
    rows = DroppedRow.objects.filter(batch=batch).values_list(
        "line", "stage", "field", "reason", "question", "external_id"
    )
    return sorted(rows)


def stored_items(batch) -> list[tuple]:
    return sorted(
        Item.objects.filter(import_batch=batch).values_list(
            "question", "external_id", "text_key", "causal_class", "topic__label", "status"
        )
    )


@pytest.fixture(params=["small chunks spooled to disk", "one chunk in memory"])
def chunking(request, monkeypatch):
    if request.param.startswith("small"):
        monkeypatch.setattr(import_service, "CHUNK_ROWS", 37)
        monkeypatch.setattr(import_service, "SPOOL_MEMORY_BYTES", 0)
        monkeypatch.setattr(import_service, "TAKE_BACK_ROWS", 3)
    return request.param


@pytest.mark.parametrize("file_format", list(WRITERS))
def test_the_chunked_import_gives_the_one_pass_funnel_dropped_rows_and_items(
    project, chunking, file_format, tmp_path
):
    to_bytes = WRITERS[file_format]
    filename = f"perguntas.{file_format}"
    # Already in the project: some texts and ids of the file (and items of another form the file never matches).
    seed = questions_import(
        project=project, data=to_bytes(mixed_rows(120, seed=2)), filename=filename, skip_invalid=True
    )
    assert seed.funnel["imported"] > 50
    rows = mixed_rows(900, seed=1) + mixed_rows(60, seed=2)[::3]
    data = to_bytes(rows)
    one_pass = one_pass_import_plan(project, data, filename)
    expected_items = sorted(
        (row.question, row.external_id, text_key(row.question), row.causal_class, row.topic or None)
        for row in one_pass.keep
    )

    path = tmp_path / filename
    path.write_bytes(data)
    batch = questions_import(project=project, path=path, filename=filename, skip_invalid=True)

    funnel = {key: value for key, value in batch.funnel.items() if key not in ("format", "dropped")}
    assert funnel == one_pass.funnel
    by_reason = Counter(f"{stage}:{field}" for _line, stage, field, *_rest in one_pass.dropped)
    assert batch.funnel["dropped"]["by_reason"] == dict(by_reason)
    assert batch.funnel["dropped"]["not_stored"] == 0
    assert list(batch.funnel["classes"]) == list(one_pass.funnel["classes"])  # the same order too
    for stage in (
        Stage.INVALID,
        Stage.NOT_CAUSAL,
        Stage.DUPLICATE,
        Stage.TOO_SHORT,
        Stage.TOO_LONG,
        Stage.ALREADY_PRESENT,
    ):
        assert any(dropped[1] == stage for dropped in one_pass.dropped), stage  # the data has every fate
    assert stored_dropped(batch) == sorted(one_pass.dropped)
    assert [item[:5] for item in stored_items(batch)] == expected_items


def test_duplicates_in_different_chunks_are_caught(project, monkeypatch):
    monkeypatch.setattr(import_service, "CHUNK_ROWS", 2)
    monkeypatch.setattr(import_service, "SPOOL_MEMORY_BYTES", 0)
    rows = [
        ["a1", "Por que a chuva molha a rua de casa?", "", "", ""],
        ["a2", "Por que o sol seca a roupa no varal?", "", "", ""],
        ["a3", "Por que o vento derruba as folhas secas?", "", "", ""],
        ["a4", "POR QUE a chuva molha a rua de casa!", "", "", ""],  # text of line 2, two chunks later
        ["a2", "Por que a neve cobre a rua de manhã?", "", "", ""],  # id of line 3
    ]
    batch = questions_import(project=project, data=as_csv(rows), filename="p.csv")
    assert batch.funnel["unique"] == 3
    assert stored_dropped(batch) == [
        (5, Stage.DUPLICATE, "question", "same text as line 2", rows[3][1], "a4"),
        (6, Stage.DUPLICATE, "id", "same id as line 3", rows[4][1], "a2"),
    ]
    again = questions_import(project=project, data=as_csv(rows), filename="p.csv")
    assert again.funnel["imported"] == 0 and again.funnel["already_present"] == 3


# --- the one-pass planning: the whole file in memory, each rule applied in turn (the reference) ------------


def _within_field_limits(rows, errors):
    """Rows with a field over its limit become errors naming the line, the field and both sizes."""
    kept, errors = [], list(errors)
    for row in rows:
        sizes = {name: len(getattr(row, name) or "") for name in FIELD_LIMITS if name != "metadata"}
        sizes["metadata"] = len(json.dumps(row.metadata, ensure_ascii=False)) if row.metadata else 0
        over = [name for name, size in sizes.items() if size > FIELD_LIMITS[name]]
        # PostgreSQL cannot store a NUL character in text; no spreadsheet means one either.
        nul = [name for name in FIELD_LIMITS if name != "metadata" and "\x00" in (getattr(row, name) or "")]
        if over or nul:
            errors.extend(
                RowError(row.line, name, f"{sizes[name]:,} characters (at most {FIELD_LIMITS[name]:,})")
                for name in over
            )
            errors.extend(RowError(row.line, name, "contains a NUL byte") for name in nul)
        else:
            kept.append(row)
    errors.sort(key=lambda error: error.line)
    return kept, errors


class _OnePassPlan:
    def __init__(self):
        self.keep: list[SourceRow] = []
        self.dropped: list[tuple] = []
        self.funnel: dict = {}

    def drop(self, row, stage: str, reason: str, field: str = ""):
        self.dropped.append((row.line, stage, field, reason, row.question, row.external_id))


def _one_pass_plan(project: Project, rows, errors, bounded: bool = True) -> _OnePassPlan:
    plan = _OnePassPlan()
    for error in errors:
        plan.dropped.append((error.line, Stage.INVALID, error.field, error.reason, "", ""))
    invalid_lines = {error.line for error in errors}

    causal = []
    for row in rows:
        if row.is_causal is False:
            plan.drop(row, Stage.NOT_CAUSAL, "is_causal is false", "is_causal")
        else:
            causal.append(row)

    unique, first_by_key, first_by_id = [], {}, {}
    for row in causal:
        row.text_key = text_key(row.question)
        if row.text_key in first_by_key:
            plan.drop(row, Stage.DUPLICATE, f"same text as line {first_by_key[row.text_key]}", "question")
        elif row.external_id and row.external_id in first_by_id:
            plan.drop(row, Stage.DUPLICATE, f"same id as line {first_by_id[row.external_id]}", "id")
        else:
            first_by_key[row.text_key] = row.line
            if row.external_id:
                first_by_id[row.external_id] = row.line
            unique.append(row)

    counts = [word_count(row.question) for row in unique]
    bounds = length_bounds(counts)
    in_length = []
    for row, words in zip(unique, counts):
        if not bounded:
            in_length.append(row)
        elif words < bounds.min_words:
            plan.drop(row, Stage.TOO_SHORT, f"{words} words (fewer than {bounds.min_words})", "question")
        elif words > bounds.max_words:
            plan.drop(
                row,
                Stage.TOO_LONG,
                f"{words} words (more than {bounds.max_words:g} = Q3 + 1.5·IQR)",
                "question",
            )
        else:
            in_length.append(row)

    existing_by_key, existing_by_id = {}, {}
    for item_id, key, external_id in Item.objects.filter(project=project).values_list(
        "id", "text_key", "external_id"
    ):
        existing_by_key.setdefault(key, item_id)
        if external_id:
            existing_by_id.setdefault(external_id, item_id)
    for row in in_length:
        if row.external_id and row.external_id in existing_by_id:
            plan.drop(row, Stage.ALREADY_PRESENT, f"same id as item #{existing_by_id[row.external_id]}", "id")
        elif row.text_key in existing_by_key:
            plan.drop(
                row, Stage.ALREADY_PRESENT, f"same text as item #{existing_by_key[row.text_key]}", "question"
            )
        else:
            plan.keep.append(row)

    plan.dropped.sort(key=lambda dropped: dropped[0])
    plan.funnel = {
        "read": len(rows) + len(invalid_lines),
        "invalid": len(invalid_lines),
        "causal": len(causal),
        "unique": len(unique),
        "in_length": len(in_length),
        "imported": len(plan.keep),
        "already_present": len(in_length) - len(plan.keep),
        "bounds": bounds.as_dict(),
        "length_bounds": bounded,
        "classes": dict(Counter(row.causal_class or "unlabelled" for row in plan.keep)),
    }
    return plan


def test_the_text_key_by_table_is_the_text_key_by_regular_expression():
    """``question_digest`` normalises Latin-1 text byte by byte through a table; every other text, and the two
    Latin-1 letters whose case fold leaves it (ß, µ), go through ``normalise``. Both give the SHA-1 of
    ``normalise(text)``: on every Latin-1 character, on questions as files hold them, and on random mixes
    of Latin-1 with letters, marks, spaces and symbols from elsewhere."""
    import hashlib

    from annotation.importing.funnel import normalise, question_digest

    def by_expression(text: str) -> bytes:
        return hashlib.sha1(normalise(text).encode("utf-8")).digest()

    rng = random.Random(11)
    alphabet = [chr(code) for code in range(256)] + list("ſﬁİıΣσςДдẞ中文日本😀\u0301\u200b\u2028\u3000\u2019")
    texts = [
        *(chr(code) for code in range(256)),
        "Por que a inflação AUMENTA quando os juros caem?",
        "  O que teria acontecido se... a safra  tivesse falhado?!  ",
        "Straße, µ-Wert: Warum?",
        "Why does __init__ run twice?",
        "Qual é o efeito da chuva no preço do café — e do açúcar?",
        "Почему растёт инфляция?",
        "",
        *("".join(rng.choice(alphabet) for _ in range(rng.randint(0, 14))) for _ in range(20_000)),
    ]
    for text in texts:
        assert question_digest(text) == by_expression(text), repr(text)
    assert text_key("Por que?") == by_expression("Por que?").hex()


def gold_rows(count: int) -> list[list[str]]:
    """Answered questions of ordinary length (8 to 12 words), every one on a topic of three."""
    topics = ["Economia", "Educação", "Saúde"]
    return [
        [
            f"g{n}",
            " ".join(["Por que a inflação sobe quando os juros caem"] + ["muito"] * (n % 5)) + f" {n}?",
            f"Porque o crédito fica mais barato ({n}).",
            topics[n % 3],
        ]
        for n in range(count)
    ]


def test_rows_over_the_upper_bound_written_early_go_back_out_with_their_decisions_and_new_topics(
    project, curator, monkeypatch
):
    """Items are written as the file is read; the upper length bound needs the whole file. A row over it,
    in the first chunk, is taken back out at the end: no item, no curation decision, and no topic that only
    it named; its dropped row says why, as when nothing was written before the end."""
    monkeypatch.setattr(import_service, "CHUNK_ROWS", 7)
    Topic.objects.create(project=project, label="Economia")
    rows = gold_rows(60)
    long_question = " ".join(["muito"] * 60) + "?"
    rows.insert(2, ["long", long_question, "Porque sim.", "Só perguntas longas"])
    data = ("id,question,answer,topic\n" + "\n".join(",".join(row) for row in rows) + "\n").encode()

    batch = questions_import(project=project, data=data, filename="ouro.csv", as_gold=True, user=curator)

    assert batch.funnel["imported"] == 60 and batch.funnel["in_length"] == 60
    assert stored_dropped(batch) == [
        (
            4,
            Stage.TOO_LONG,
            "question",
            f"60 words (more than {batch.funnel['bounds']['max_words']:g} = Q3 + 1.5·IQR)",
            long_question,
            "long",
        )
    ]
    items = Item.objects.filter(import_batch=batch)
    assert items.count() == 60 and not items.filter(external_id="long").exists()
    assert CurationDecision.objects.filter(item__import_batch=batch).count() == 60
    assert sorted(Topic.objects.filter(project=project).values_list("label", flat=True)) == [
        "Economia",
        "Educação",
        "Saúde",
    ]
    economia = Topic.objects.get(project=project, label="Economia")
    assert items.filter(topic=economia).count() == 20  # the topic already there, not a second one


def test_a_file_with_an_error_after_items_were_written_leaves_nothing(project, monkeypatch):
    """The first chunks are written before the error further on is read: the import's transaction is undone
    whole (items, topics), and the batch reports the error."""
    monkeypatch.setattr(import_service, "CHUNK_ROWS", 5)
    rows = gold_rows(30) + [["bad", "", "", "Novo tema"]]
    data = ("id,question,answer,topic\n" + "\n".join(",".join(row) for row in rows) + "\n").encode()

    with pytest.raises(ImportRejected) as rejected:
        questions_import(project=project, data=data, filename="perguntas.csv")

    assert [(error.line, error.field) for error in rejected.value.errors] == [(32, "question")]
    assert not Item.objects.filter(project=project).exists()
    assert not Topic.objects.filter(project=project).exists()
    assert rejected.value.batch.status == ImportBatch.Status.FAILED


def test_new_topics_take_ids_no_topic_had_before(project):
    """Topic ids are handed out while the rows are made (on PostgreSQL from the sequence, on SQLite after the
    highest id ever given): never one a deleted topic had."""
    gone = Topic.objects.create(project=project, label="Apagado")
    gone_id = gone.pk
    gone.delete()
    data = ("id,question,answer,topic\n" + "\n".join(",".join(row) for row in gold_rows(9)) + "\n").encode()

    batch = questions_import(project=project, data=data, filename="perguntas.csv")

    topics = Topic.objects.filter(project=project)
    assert topics.count() == 3 and min(topics.values_list("pk", flat=True)) > gone_id
    assert Item.objects.filter(import_batch=batch, topic__isnull=True).count() == 0
    highest = max(topics.values_list("pk", flat=True))
    assert Topic.objects.create(project=project, label="Depois").pk > highest


@pytest.mark.parametrize("file_format", ["xlsx", "csv"])
def test_a_spreadsheet_is_read_before_the_write_begins_on_sqlite(project, monkeypatch, file_format):
    """On SQLite the import's transaction holds the database's write lock: a spreadsheet, whose XML takes
    longer to read than the rest of its import, is read before it; a CSV is read while its items are written."""
    monkeypatch.setattr(import_service, "CHUNK_ROWS", 10)
    events = []
    write, checked = import_service._write, import_service._within_field_limits_into
    monkeypatch.setattr(import_service, "_write", lambda *args: (events.append("write"), write(*args)))
    monkeypatch.setattr(
        import_service, "_within_field_limits_into", lambda *args: (events.append("read"), checked(*args))[1]
    )
    rows = [[f"q{n}", f"Por que a chuva forte alaga a rua número {n}?", "", "true", ""] for n in range(45)]

    batch = questions_import(project=project, data=WRITERS[file_format](rows), filename=f"p.{file_format}")

    assert batch.funnel["imported"] == 45 and events.count("read") == 5
    read_first = file_format == "xlsx" and connection.vendor == "sqlite"
    assert (events.index("write") == 5) == read_first and (events.index("write") == 0) == (not read_first)


def test_a_class_whose_first_row_goes_back_out_is_counted_where_its_first_kept_row_is(project, monkeypatch):
    """The funnel lists the classes in the order of their first imported row. A class whose first row written
    was over the upper bound moves behind the classes whose first rows stay; one with no row left is gone."""
    monkeypatch.setattr(import_service, "CHUNK_ROWS", 5)
    long_question = " ".join(["muito"] * 70) + "?"
    rows = [["longa", long_question, "contrafactual", "true", ""]]
    rows += [
        [
            f"a{n}",
            f"Por que a inflação sobe quando os juros caem no caso número {n}?",
            "associational",
            "true",
            "",
        ]
        for n in range(20)
    ]
    rows.append(
        ["c1", "E se o banco central não tivesse subido os juros naquele ano?", "contrafactual", "", ""]
    )
    rows.append(["i1", " ".join(["juros"] * 80) + "?", "interventional", "true", "Economia"])
    data = as_csv(rows)
    one_pass = one_pass_import_plan(project, data, "perguntas.csv")

    batch = questions_import(project=project, data=data, filename="perguntas.csv")

    assert batch.funnel["imported"] == 21
    assert list(batch.funnel["classes"].items()) == list(one_pass.funnel["classes"].items())
    assert list(batch.funnel["classes"]) == ["associational", "counterfactual"]
    assert [row[:2] for row in stored_dropped(batch)] == [(2, Stage.TOO_LONG), (24, Stage.TOO_LONG)]
    assert not Topic.objects.filter(project=project).exists()  # named only by a row taken back


def test_dropped_rows_of_a_repeated_reason_are_counted_and_only_a_sample_is_stored(
    project, monkeypatch, client_for, curator
):
    """A file of one row repeated is one count per reason, not a stored row per copy; the funnel's own stages
    (not causal, too short) keep every row."""
    monkeypatch.setattr(import_service, "DROPPED_SAMPLE", 5)
    rows = [["a1", "Por que a chuva molha a rua de casa?", "", "", ""]] * 40
    rows += [[f"n{n}", f"Por que o rio {n} corre para o mar?", "", "false", ""] for n in range(12)]
    batch = questions_import(project=project, data=as_csv(rows), filename="p.csv")
    assert batch.funnel["imported"] == 1
    assert batch.funnel["dropped"]["by_reason"] == {"duplicate:question": 39, "not_causal:is_causal": 12}
    assert batch.funnel["dropped"]["not_stored"] == 34
    stored = Counter(DroppedRow.objects.filter(batch=batch).values_list("stage", flat=True))
    assert stored == {Stage.DUPLICATE: 5, Stage.NOT_CAUSAL: 12}
    assert list(
        DroppedRow.objects.filter(batch=batch, stage=Stage.DUPLICATE)
        .order_by("line")
        .values_list("line", flat=True)
    ) == [3, 4, 5, 6, 7]
    from django.urls import reverse

    page = client_for(curator).get(reverse("annotation:import_detail", args=[project.slug, batch.pk]))
    assert "34 more dropped rows repeat reasons already listed 5 times each" in page.content.decode()
