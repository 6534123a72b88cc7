"""Files shaped the way researchers publish causal question datasets: a Portuguese spreadsheet with its
own headers and spellings (as Causal_QA.PT's supplementary material), and the same rows in every format."""

import csv
import io
import json

# pergunta, resposta, classe, respondido_por, fonte, id — eight rows, two classes answered by models.
CAUSAL_ROWS = [
    (
        "Por que o preço do café sobe quando há geada em Minas Gerais?",
        "A geada destrói parte da safra, a oferta cai e o preço sobe.",
        "Associacional",
        "humano",
        "Reddit",
        "cqa-001",
    ),
    (
        "Por que cidades com mais árvores costumam ser menos quentes no verão?",
        "A sombra e a evapotranspiração das árvores reduzem a temperatura local.",
        "ASSOCIACIONAL",
        "Humano",
        "Reddit",
        "cqa-002",
    ),
    (
        "Se o governo reduzir o IPI dos carros, as vendas vão aumentar?",
        "Provavelmente sim: o preço final cai e a demanda tende a subir.",
        "Intervencional",
        "humano",
        "WildChat",
        "cqa-003",
    ),
    (
        "Se eu passar a dormir oito horas por noite, minha memória vai melhorar?",
        "O sono consolida a memória; dormir mais tende a melhorar a retenção.",
        "intervencional",
        "gpt-4o",
        "ShareGPT",
        "cqa-004",
    ),
    (
        "Se eu trocar o óleo do carro com mais frequência, o motor dura mais?",
        "Trocas regulares reduzem o desgaste, então o motor tende a durar mais.",
        "Intervencional",
        "GPT-4o",
        "WildChat",
        "cqa-005",
    ),
    (
        "Se eu não tivesse perdido o ônibus, teria chegado a tempo da prova?",
        "Provavelmente sim, se o ônibus não tivesse atrasado também.",
        "Contrafactual",
        "gpt-4o",
        "ShareGPT",
        "cqa-006",
    ),
    (
        "Se a chuva não tivesse caído ontem, o jogo teria acontecido normalmente?",
        "Sim, o jogo só foi adiado por causa do campo alagado.",
        "contrafactual",
        "gemma-3-27b",
        "Reddit",
        "cqa-007",
    ),
    (
        "O que teria acontecido com a economia se o real não tivesse sido criado?",
        "A inflação alta provavelmente teria continuado por mais anos.",
        "Contrafactual",
        "humano",
        "Reddit",
        "cqa-008",
    ),
]
HEADER = ("pergunta", "resposta", "classe", "respondido_por", "fonte", "id")


def records() -> list[dict]:
    return [dict(zip(HEADER, row)) for row in CAUSAL_ROWS]


def csv_text(delimiter: str = ",", rows=CAUSAL_ROWS, header=HEADER) -> bytes:
    buffer = io.StringIO()
    writer = csv.writer(buffer, delimiter=delimiter)
    writer.writerow(header)
    writer.writerows(rows)
    return buffer.getvalue().encode("utf-8")


def jsonl_text() -> bytes:
    return "".join(json.dumps(record, ensure_ascii=False) + "\n" for record in records()).encode("utf-8")


def xlsx_bytes(rows=CAUSAL_ROWS, header=HEADER, sheet: str = "perguntas", extra_sheets=("leia-me",)) -> bytes:
    import openpyxl

    book = openpyxl.Workbook(write_only=True)
    for name in extra_sheets:
        book.create_sheet(name).append(["Planilha publicada com o artigo; uma pergunta por linha."])
    data_sheet = book.create_sheet(sheet)
    data_sheet.append(list(header))
    for row in rows:
        data_sheet.append(list(row))
    buffer = io.BytesIO()
    book.save(buffer)
    return buffer.getvalue()


def parquet_bytes() -> bytes:
    import pyarrow as pa
    import pyarrow.parquet as pq

    buffer = io.BytesIO()
    pq.write_table(pa.Table.from_pylist(records()), buffer)
    return buffer.getvalue()


def save_to_disk_folder(folder, splits=True):
    """A folder as ``datasets.Dataset.save_to_disk`` (or ``DatasetDict``) writes it."""
    from datasets import Dataset, DatasetDict

    rows = records()
    if not splits:
        Dataset.from_list(rows).save_to_disk(str(folder))
        return folder
    DatasetDict({"train": Dataset.from_list(rows[:5]), "test": Dataset.from_list(rows[5:])}).save_to_disk(
        str(folder)
    )
    return folder
