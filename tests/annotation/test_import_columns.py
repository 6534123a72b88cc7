"""The import reads and checks its rows a chunk of columns at a time: a CSV through pyarrow, in C, and
every rule over whole columns. Both give what the row-at-a-time path gave on the same files: the csv module's
cells and lines, the row checker's rows, errors and unknown values (kept below, as it was)."""

import csv
import io
import json
import random

import pytest

from annotation.importing import tables
from annotation.importing.errors import RowError
from annotation.importing.mapping import Mapping, fold, propose
from annotation.importing.read import (
    _BOOLEANS,
    _UNKNOWN,
    CHECKED_FIELDS,
    MAX_FIELD_CHARS,
    AnswererResolver,
    LabelResolver,
    SourceRow,
    UnknownValues,
    _text,
    json_value,
)
from tests.annotation.import_rows import read_rows

LABELS = ["associational", "interventional", "counterfactual"]


def by_csv_module(data: bytes, filename: str) -> tables.Table:
    return tables.open_table(data, filename)  # a preview's reading: the csv module's


def by_pyarrow(data: bytes, filename: str, tmp_path, from_path: bool) -> tables.Table:
    if not from_path:
        return tables._arrow_csv_table(data, filename)
    path = tmp_path / filename
    path.write_bytes(data)
    return tables._arrow_csv_table(None, filename, path)


def rows_of(table: tables.Table) -> list:
    return list(table.rows)


def chunks_of(table: tables.Table, names: list[str], size: int = 3) -> list:
    return list(table.column_chunks(size, names))


def written(rows, delimiter=",", line_end="\n", quoting=csv.QUOTE_MINIMAL) -> str:
    buffer = io.StringIO()
    buffer.write(delimiter.join(("id", "pergunta", "classe", "fonte")) + line_end)
    csv.writer(buffer, delimiter=delimiter, lineterminator=line_end, quoting=quoting).writerows(rows)
    return buffer.getvalue()


PT_ROWS = [
    ("cqa-1", "Por que o preço do café sobe quando há geada em Minas Gerais?", "Associacional", "Reddit"),
    ("cqa-2", 'Ele disse "talvez", mas a chuva, afinal, atrasou a colheita?', "intervencional", "WildChat"),
    ("cqa-3", "  Se eu não tivesse perdido o ônibus; teria chegado a tempo?  ", "Contrafactual", ""),
    ("cqa-4", "Why does “inflation” rise when rates fall? 📈", "associational", "ShareGPT"),
    ("", "", "", ""),  # a row of empty cells: skipped
    ("cqa-5", 'a"b"c mid-cell quotes, and a trailing ""', "NA", "null"),
    ("cqa-6", "E a vírgula, o ponto-e-vírgula; e o\ttab?", "1", "0"),
]

# Files as researchers publish them, each read by pyarrow exactly as the csv module reads it.
SAME_FILES = {
    "comma, LF": written(PT_ROWS),
    "comma, CRLF": written(PT_ROWS, line_end="\r\n"),
    "semicolon (a Brazilian spreadsheet's CSV)": written(PT_ROWS, delimiter=";"),
    "tab": written(PT_ROWS, delimiter="\t"),
    "BOM, no newline at the end": "\ufeff" + written(PT_ROWS).rstrip("\n"),
    "blank lines in the middle and at the end": written(PT_ROWS[:3])
    + "\n\n"
    + written(PT_ROWS[3:])[28:]
    + "\n\r\n",
    "every cell quoted": written(PT_ROWS, quoting=csv.QUOTE_ALL),
    "only a header": "id,pergunta,classe,fonte\n",
    "one column": "pergunta\nPor que chove?\n   \nSe eu correr chego antes?\n",
}


@pytest.mark.parametrize("from_path", [False, True], ids=["bytes", "path"])
@pytest.mark.parametrize("block", [7, tables.SCAN_BLOCK_BYTES], ids=["blocks of 7 bytes", "one block"])
@pytest.mark.parametrize("name", list(SAME_FILES))
def test_pyarrow_reads_a_csv_as_the_csv_module_does(name, block, from_path, monkeypatch, tmp_path):
    monkeypatch.setattr(tables, "SCAN_BLOCK_BYTES", block)
    filename = "perguntas.tsv" if name == "tab" else "perguntas.csv"
    data = SAME_FILES[name].encode("utf-8")
    expected = by_csv_module(data, filename)
    fast = by_pyarrow(data, filename, tmp_path, from_path)
    assert fast is not None, "pyarrow reads this file"
    assert fast.columns == expected.columns and fast.format == expected.format
    expected_rows = rows_of(expected)
    assert rows_of(fast) == expected_rows
    assert expected_rows or name == "only a header"
    again = by_pyarrow(data, filename, tmp_path, from_path)
    expected = by_csv_module(data, filename)
    names = [*expected.columns, "not in the file"]
    assert chunks_of(again, names) == chunks_of(expected, names)
    assert not expected.errors and not again.errors


# What pyarrow would read otherwise, or could not read: the csv module reads it, with its line numbers and errors.
OTHER_FILES = {
    "a quoted cell over two lines": 'id,pergunta\n1,"Por que\nchove?"\n2,Se eu correr?\n',
    "a lone carriage return": "id,pergunta\n1,Por que chove?\r2,Se eu correr?\n",
    "a carriage return at the very end": "id,pergunta\n1,Por que chove?\r",
    "a NUL byte": "id,pergunta\n1,Por que\x00 chove?\n",
    "a cell longer than the csv module takes": "id,pergunta\n1,"
    + "x" * (csv.field_size_limit() + 1)
    + "\n2,ok\n",
    "a quoted header": '"id","pergunta"\n1,Por que chove?\n',
    "a repeated column": "id,pergunta,pergunta\n1,Por que chove?,Se eu correr?\n",
    "an empty column name": "id,,pergunta\n1,x,Por que chove?\n",
    "a row with more cells": "id,pergunta\n1,Por que chove?,extra\n2,Se eu correr?\n",
    "a row with fewer cells": "id,pergunta,classe\n1,Por que chove?\n2,Se eu correr?,intervencional\n",
    "an odd quote in a cell": 'id,pergunta\n1,Ele disse "talvez\n2,ok\n',
    "a blank first line": "\nid,pergunta\n1,Por que chove?\n",
    "an open quote at the end": 'id,pergunta\n1,Por que chove?\n2,"Se eu correr',
    "an odd quote, then lines without one": 'id,pergunta\n1,Ele "disse\n2,talvez\n3,que sim\n4,ou não\n',
}


@pytest.mark.parametrize("block", [7, tables.SCAN_BLOCK_BYTES], ids=["blocks of 7 bytes", "one block"])
@pytest.mark.parametrize("name", list(OTHER_FILES))
def test_what_pyarrow_would_read_otherwise_is_left_to_the_csv_module(name, block, monkeypatch, tmp_path):
    monkeypatch.setattr(tables, "SCAN_BLOCK_BYTES", block)
    data = OTHER_FILES[name].encode("utf-8")
    assert by_pyarrow(data, "perguntas.csv", tmp_path, from_path=False) is None
    assert by_pyarrow(data, "perguntas.csv", tmp_path, from_path=True) is None
    table = tables.open_table(data, "perguntas.csv", every_row=True)
    expected = by_csv_module(data, "perguntas.csv")
    assert rows_of(table) == rows_of(expected)


def test_text_that_is_not_utf8_is_left_to_the_csv_module_which_names_its_line(tmp_path):
    data = "id,pergunta\n1,Por que chove?\n2,Não sei\n".encode("latin-1")
    assert by_pyarrow(data, "p.csv", tmp_path, from_path=False) is None
    table = tables.open_table(data, "p.csv", every_row=True)
    assert [line for line, _record in table.rows] == [2]
    assert [(error.line, error.reason) for error in table.errors] == [
        (3, "invalid UTF-8 (byte 0xe3 at column 4)")
    ]


def test_a_jsonl_file_is_not_read_as_a_csv(tmp_path):
    data = '\ufeff{"pergunta": "Por que chove?", "id": 1}\n'.encode()
    assert by_pyarrow(data, "dados", tmp_path, from_path=False) is None
    assert tables.open_table(data, "dados", every_row=True).format == "jsonl"


# --- the row checker, as it was (annotation/importing/read.py before the column checker) -----------------


class _RowChecker:
    def __init__(self, mapping: Mapping, columns, labels, errors, unknown):
        self.column = {name: mapping.columns.get(name) for name in CHECKED_FIELDS}
        self.kept = mapping.metadata_columns(columns)
        self.labels = labels
        self.answerers = AnswererResolver(mapping.values.get("answer_by"))
        self.causal_words = {fold(raw): value for raw, value in mapping.values.get("is_causal", {}).items()}
        self.errors = errors
        self.unknown = unknown

    def __call__(self, line: int, record: dict) -> SourceRow | None:
        errors = self.errors
        found_errors = len(errors)

        def get(name):
            key = self.column[name]
            return record.get(key) if key is not None else None

        def text(name):
            return _text(get(name))

        question = text("question")
        if not question:
            errors.append(RowError(line, "question", "is missing or empty"))
        elif len(question) > MAX_FIELD_CHARS:
            errors.append(
                RowError(line, "question", f"is {len(question)} characters long (limit {MAX_FIELD_CHARS})")
            )
        raw_class = text("causal_class")
        causal_class = ""
        if raw_class:
            causal_class = self.labels.resolve(raw_class) or ""
            if not causal_class:
                allowed = ", ".join(self.labels.labels)
                errors.append(
                    RowError(
                        line, "causal_class", f"unknown class {raw_class!r} (expected one of: {allowed})"
                    )
                )
                self.unknown.add("causal_class", raw_class, line)
        raw_causal = get("is_causal")
        if isinstance(raw_causal, str) and self.causal_words:
            raw_causal = self.causal_words.get(fold(raw_causal), raw_causal)
        is_causal = _BOOLEANS[raw_causal] if isinstance(raw_causal, str) else raw_causal
        if type(raw_causal) in (int, float) and raw_causal in (0, 1):
            is_causal = bool(raw_causal)
        if not (is_causal is None or isinstance(is_causal, bool)):
            is_causal = None
            errors.append(RowError(line, "is_causal", f"{raw_causal!r} is not a boolean (use true/false)"))
        if len(errors) > found_errors:
            return None
        answer = text("answer")
        answer_model = self.answerers.resolve(text("answer_by")) if answer else None
        metadata = {
            name: json_value(record[name]) for name in self.kept if record.get(name) not in ("", None)
        }
        expertise = text("expertise")
        if expertise:
            metadata["expertise"] = expertise
        return SourceRow(
            line=line,
            question=question,
            causal_class=causal_class,
            is_causal=is_causal,
            source=text("source")[:200],
            topic=text("topic")[:200],
            external_id=text("id")[:200],
            context=text("context"),
            answer=answer,
            answer_model=answer_model,
            metadata=metadata,
        )


assert _UNKNOWN is not None  # the row checker's marker, which the column checker shares


def varied_records(count: int, seed: int) -> list[dict]:
    """Records as JSONL and spreadsheets give them: text with spaces around, numbers, booleans, lists, None,
    missing keys; every kind of problem; answers by people and by models; columns kept as metadata."""
    rng = random.Random(seed)
    questions = [
        "Por que o desemprego sobe quando os juros sobem?",
        "  Se eu estudar à noite, minhas notas melhoram?  ",
        "What would have happened if the dam had not broken?",
        "",
        None,
        "x" * (MAX_FIELD_CHARS + 1),
        42,
        ["uma", "lista"],
    ]
    records = []
    for n in range(count):
        record = {
            "pergunta": rng.choice(questions),
            "classe": rng.choice(
                ["Associativa", " contrafactual ", "", None, "talvez", "c3", 7, "INTERVENCIONAL"]
            ),
            "causal": rng.choice(
                ["sim", " Não ", "", None, True, False, 1, 0, 0.0, 2, "perhaps", "talvez", "x"]
            ),
            "resposta": rng.choice(["", "Porque sim.", None, "  A chuva.  ", 3.0]),
            "quem": rng.choice(["humano", "gpt-4o", "modelo", "", None, "GPT", " Anotadora "]),
            "fonte": rng.choice(["Reddit", "r" * 250, "", 12]),
            "tema": rng.choice(["Economia", "Educação", None]),
            "id": rng.choice([f"q{n}", f"q{n // 2}", "", 17.0, None]),
            "nivel": rng.choice(["", "graduação", None]),
            "ano": rng.choice([2020, "", None, 0, False, "2021", {"a": 1}, [1, 2]]),
            "obs": rng.choice(["", "revisar", None]),
        }
        for key in list(record):
            if rng.random() < 0.05:
                del record[key]
        records.append(record)
    return records


MAPPING = Mapping(
    columns={
        "question": "pergunta",
        "causal_class": "classe",
        "is_causal": "causal",
        "answer": "resposta",
        "answer_by": "quem",
        "source": "fonte",
        "topic": "tema",
        "id": "id",
        "expertise": "nivel",
    },
    values={
        "causal_class": {"c3": "counterfactual"},
        "is_causal": {"talvez": "false"},
        "answer_by": {"GPT": "gpt-4o"},
    },
)
COLUMNS = ["pergunta", "classe", "causal", "resposta", "quem", "fonte", "tema", "id", "nivel", "ano", "obs"]


@pytest.mark.parametrize("mapping", [MAPPING, None], ids=["every field mapped", "proposed, metadata kept"])
def test_the_column_checker_gives_what_the_row_checker_gave(mapping):
    mapping = mapping or propose(COLUMNS, {})
    records = list(enumerate(varied_records(3000, seed=5), start=2))
    results = []
    for check_rows in ("rows", "columns"):
        errors: list[RowError] = []
        unknown = UnknownValues()
        labels = LabelResolver(LABELS, mapping.values.get("causal_class"))
        if check_rows == "rows":
            checker = _RowChecker(mapping, COLUMNS, labels, errors, unknown)
            rows = [row for row in (checker(line, record) for line, record in records) if row is not None]
        else:
            rows = []
            for start in range(0, len(records), 128):  # in chunks, as the import reads
                rows += read_rows(records[start : start + 128], COLUMNS, mapping, labels, errors, unknown)
        errors.sort(key=lambda error: error.line)
        results.append((rows, [error.as_dict() for error in errors], json.dumps(unknown.as_dict())))
    (rows, errors, unknown), (column_rows, column_errors, column_unknown) = results
    assert len(rows) > 300 and len(errors) > 1000  # every fate is there
    assert column_rows == rows
    assert column_errors == errors
    assert column_unknown == unknown


def _transposed(rows: list, names: list[str], size: int) -> list:
    return [
        (
            [line for line, _record in rows[start : start + size]],
            {name: [record.get(name) for _line, record in rows[start : start + size]] for name in names},
        )
        for start in range(0, len(rows), size)
    ]


def test_the_chunks_of_columns_of_every_format_are_its_rows(tmp_path, monkeypatch):
    """Parquet and Arrow give their chunks straight from their record batches (a folder of splits adds each
    row's split, a column named twice is its last one); the other formats from their rows. Either way a chunk
    holds what the rows hold."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from tests.annotation.published_files import CAUSAL_ROWS, HEADER, jsonl_text, xlsx_bytes

    splits = tmp_path / "splits"
    (splits / "data").mkdir(parents=True)
    records = [dict(zip(HEADER, row)) for row in CAUSAL_ROWS]
    pq.write_table(pa.Table.from_pylist(records[:5]), splits / "data" / "train-00000-of-00001.parquet")
    pq.write_table(pa.Table.from_pylist(records[5:]), splits / "data" / "test-00000-of-00001.parquet")
    arrow = tmp_path / "arrow" / "train"
    arrow.mkdir(parents=True)
    with pa.ipc.new_stream(
        arrow / "data-00000-of-00001.arrow", pa.schema([(name, pa.string()) for name in HEADER])
    ) as stream:
        stream.write_table(pa.Table.from_pylist(records))
    twice = io.BytesIO()
    pq.write_table(pa.table([pa.array(["a", "b"]), pa.array(["Por que?", "Se?"])], names=["id", "id"]), twice)
    sources = {
        "parquet folder of splits": (None, "splits", splits),
        "save_to_disk folder": (None, "arrow", tmp_path / "arrow"),
        "parquet, a name twice": (twice.getvalue(), "dupla.parquet", None),
        "jsonl": (jsonl_text(), "p.jsonl", None),
        "xlsx": (xlsx_bytes(extra_sheets=()), "p.xlsx", None),
        "csv by the csv module": (b'pergunta,id\n"Por que\nchove?",1\n\nSe eu correr?,2\n', "p.csv", None),
    }
    monkeypatch.setattr(tables, "ARROW_BATCH_ROWS", 3)  # batches of 3, chunks of 2
    for name, (data, filename, path) in sources.items():
        table = tables.open_table(data, filename, path=path)
        names = [*table.columns, "split", "absent"]
        rows = list(tables.open_table(data, filename, path=path).rows)
        assert rows, name
        assert list(table.column_chunks(2, names)) == _transposed(rows, names, 2), name
