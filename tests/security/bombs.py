"""Hostile files, made when a test asks for them (a few hundred KB at most on disk, however much they expand to).

``python -m tests.security.bombs DIR`` writes them all into DIR, to try a door by hand."""

import io
import sys
import zipfile
from pathlib import Path

WORKBOOK = (
    '<?xml version="1.0"?><workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" '
    'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships">'
    '<sheets><sheet name="Sheet1" sheetId="1" r:id="rId1"/></sheets></workbook>'
)
RELS = (
    '<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
    '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet"'
    ' Target="worksheets/sheet1.xml"/></Relationships>'
)
MAIN = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"


def _repeated(head: bytes, filler: bytes, size: int, tail: bytes = b"") -> bytes:
    return head + filler * ((size - len(head) - len(tail)) // len(filler)) + tail


def zipped_csv(size: int = 200 * 1024 * 1024) -> bytes:
    """A .zip of one CSV of ``size`` bytes of identical rows (about 1/1000 of that on disk)."""
    buffer = io.BytesIO()
    with (
        zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive,
        archive.open("train.csv", "w", force_zip64=True) as member,
    ):
        member.write(b"question,causal_class\n")
        row = b"Por que a chuva molha a rua?,associational\n" * 20_000
        for _ in range(size // len(row)):
            member.write(row)
    return buffer.getvalue()


def many_members(count: int = 5000) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for number in range(count):
            archive.writestr(f"part-{number}.csv", "question\nPor que?\n")
    return buffer.getvalue()


def _workbook(sheet: bytes, shared: bytes | None = None, compression=zipfile.ZIP_DEFLATED) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression) as archive:
        archive.writestr("xl/workbook.xml", WORKBOOK)
        archive.writestr("xl/_rels/workbook.xml.rels", RELS)
        archive.writestr("xl/worksheets/sheet1.xml", sheet)
        if shared is not None:
            archive.writestr("xl/sharedStrings.xml", shared)
    return buffer.getvalue()


def xlsx_huge_shared_string(size: int = 200 * 1024 * 1024, compression=zipfile.ZIP_DEFLATED) -> bytes:
    sheet = f'<worksheet xmlns="{MAIN}"><sheetData><row r="1"><c r="A1" t="s"><v>0</v></c></row></sheetData></worksheet>'
    shared = _repeated(f'<sst xmlns="{MAIN}"><si><t>'.encode(), b"a", size, b"</t></si></sst>")
    return _workbook(sheet.encode(), shared, compression)


def xlsx_huge_attribute(size: int = 64 * 1024 * 1024, compression=zipfile.ZIP_DEFLATED) -> bytes:
    """A sheet whose first row's tag carries one attribute of ``size`` bytes (one XML token)."""
    head = f'<worksheet xmlns="{MAIN}"><sheetData><row r="1" x="'.encode()
    tail = b'"><c r="A1" t="inlineStr"><is><t>question</t></is></c></row></sheetData></worksheet>'
    return _workbook(_repeated(head, b"a", size, tail), compression=compression)


def xlsx_billion_laughs() -> bytes:
    entities = '<!ENTITY lol "lol">' + "".join(
        f'<!ENTITY lol{n} "{("&lol" + (str(n - 1) if n > 1 else "") + ";") * 10}">' for n in range(1, 10)
    )
    sheet = (
        f'<?xml version="1.0"?><!DOCTYPE worksheet [{entities}]><worksheet xmlns="{MAIN}"><sheetData>'
        '<row r="1"><c r="A1" t="inlineStr"><is><t>&lol9;</t></is></c></row></sheetData></worksheet>'
    )
    return _workbook(sheet.encode())


def parquet_identical_rows(count: int = 50_000) -> bytes:
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.table(
        {"question": ["Por que a chuva molha a rua?"] * count, "causal_class": ["associational"] * count}
    )
    buffer = io.BytesIO()
    pq.write_table(table, buffer)
    return buffer.getvalue()


BOMBS = {
    "zipped.zip": zipped_csv,
    "members.zip": many_members,
    "shared.xlsx": xlsx_huge_shared_string,
    "attribute.xlsx": xlsx_huge_attribute,
    "laughs.xlsx": xlsx_billion_laughs,
    "identical.parquet": parquet_identical_rows,
}

if __name__ == "__main__":
    folder = Path(sys.argv[1])
    folder.mkdir(parents=True, exist_ok=True)
    for name, make in BOMBS.items():
        (folder / name).write_bytes(make())
        print(name, (folder / name).stat().st_size)
