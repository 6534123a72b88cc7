"""Streaming the rows of one sheet of an .xlsx workbook, fast.

openpyxl's read-only mode streams too, but builds Python objects per cell, which dominates the time of a
large sheet; this reads the sheet's XML with expat in chunks and keeps only the current row, so memory stays
flat and the time goes to the values themselves (figures: ``benchmarks/``). The workbook's parts are found as openpyxl
would (workbook.xml and its relationships); shared strings are loaded once; numbers in a date format
become dates (openpyxl's own conversion).
"""

import re
import zipfile
from collections.abc import Iterator
from xml.parsers import expat

from openpyxl.utils.datetime import from_excel

from .limits import no_dtd, shared_strings_checked, token_checked

MAIN = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
RELS = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
CHUNK_BYTES = 1 << 20
# Built-in number formats that show dates or times (ECMA-376 18.8.30).
DATE_FORMAT_IDS = set(range(14, 23)) | {45, 46, 47}
_DATE_CODE = re.compile(r"[dmyhs]", re.IGNORECASE)
_QUOTED = re.compile(r'"[^"]*"|\[[^\]]*\]')


def _guarded_parser(**kwargs):
    """An expat parser that refuses a DTD (a workbook has none; entities could expand without end)."""
    parser = expat.ParserCreate(**kwargs)
    parser.StartDoctypeDeclHandler = no_dtd
    parser.EntityDeclHandler = no_dtd
    return parser


class WorkbookError(Exception):
    """The archive is not a workbook this reader understands (named in the message)."""


class Workbook:
    def __init__(self, archive: zipfile.ZipFile):
        self.archive = archive
        self.sheets = self._sheets()  # name → part path, in workbook order
        self.strings = self._shared_strings()
        self.date_styles = self._date_styles()

    @property
    def sheetnames(self) -> list[str]:
        return list(self.sheets)

    def rows(self, name: str) -> Iterator[tuple[int, list]]:
        """(row number, values by column position) for each row with a cell, in sheet order."""
        parser = _SheetParser(self.strings, self.date_styles)
        fed = 0
        with self.archive.open(self.sheets[name]) as part:
            while True:
                chunk = part.read(CHUNK_BYTES)
                parser.feed(chunk, final=not chunk)
                fed += len(chunk)
                token_checked(fed, parser.parser.CurrentByteIndex)
                yield from parser.take()
                if not chunk:
                    break

    def _read(self, path: str) -> bytes | None:
        try:
            return self.archive.read(path)
        except KeyError:
            return None

    def _sheets(self) -> dict[str, str]:
        workbook = self._read("xl/workbook.xml")
        rels = self._read("xl/_rels/workbook.xml.rels")
        if workbook is None or rels is None:
            raise WorkbookError("no workbook part (xl/workbook.xml) in the archive")
        targets = {
            attrs["Id"]: attrs["Target"] for tag, attrs in _elements(rels) if tag.endswith("Relationship")
        }
        sheets = {}
        for tag, attrs in _elements(workbook):
            if tag == f"{MAIN} sheet":
                target = targets.get(attrs.get(f"{RELS} id", ""), "")
                sheets[attrs["name"]] = target.lstrip("/") if target.startswith("/") else f"xl/{target}"
        return sheets

    def _shared_strings(self) -> list[str]:
        try:
            shared_strings_checked(self.archive.getinfo("xl/sharedStrings.xml").file_size)
        except KeyError:
            return []
        data = self._read("xl/sharedStrings.xml")
        if data is None:
            return []
        strings: list[str] = []
        parts: list[str] = []
        state = {"in_t": False, "in_rph": False}

        def start(tag, attrs):
            if tag == f"{MAIN} si":
                parts.clear()
            elif tag == f"{MAIN} t":
                state["in_t"] = True
            elif tag == f"{MAIN} rPh":  # phonetic hints are not part of the text
                state["in_rph"] = True

        def end(tag):
            if tag == f"{MAIN} si":
                strings.append("".join(parts))
            elif tag == f"{MAIN} t":
                state["in_t"] = False
            elif tag == f"{MAIN} rPh":
                state["in_rph"] = False

        def text(data):
            if state["in_t"] and not state["in_rph"]:
                parts.append(data)

        parser = _guarded_parser(namespace_separator=" ")
        parser.StartElementHandler, parser.EndElementHandler, parser.CharacterDataHandler = start, end, text
        parser.buffer_text = True
        parser.Parse(data, True)
        return strings

    def _date_styles(self) -> set[str]:
        data = self._read("xl/styles.xml")
        if data is None:
            return set()
        custom_dates: set[int] = set()
        styles: list[int] = []
        state = {"in_xfs": False}

        def start(tag, attrs):
            if tag == f"{MAIN} numFmt":
                code = _QUOTED.sub("", attrs.get("formatCode", ""))
                if _DATE_CODE.search(code):
                    custom_dates.add(int(attrs.get("numFmtId", -1)))
            elif tag == f"{MAIN} cellXfs":
                state["in_xfs"] = True
            elif tag == f"{MAIN} xf" and state["in_xfs"]:
                styles.append(int(attrs.get("numFmtId", 0)))

        def end(tag):
            if tag == f"{MAIN} cellXfs":
                state["in_xfs"] = False

        parser = _guarded_parser(namespace_separator=" ")
        parser.StartElementHandler, parser.EndElementHandler = start, end
        parser.Parse(data, True)
        return {
            str(index) for index, fmt in enumerate(styles) if fmt in DATE_FORMAT_IDS or fmt in custom_dates
        }


def _elements(data: bytes) -> list[tuple[str, dict]]:
    found = []
    parser = _guarded_parser(namespace_separator=" ")
    parser.StartElementHandler = lambda tag, attrs: found.append((tag, attrs))
    parser.Parse(data, True)
    return found


def column_index(reference: str) -> int:
    """0-based column of a cell reference: "A7" → 0, "AB12" → 27."""
    index = 0
    for char in reference:
        if char.isdigit():
            break
        index = index * 26 + (ord(char.upper()) - 64)
    return index - 1


class _SheetParser:
    """Collects finished rows as the sheet's XML is fed in; one row is held at a time."""

    def __init__(self, strings: list[str], date_styles: set[str]):
        self.strings = strings
        self.date_styles = date_styles
        self.done: list[tuple[int, list]] = []
        self.row: list = []
        self.row_number = 0
        self.cell_type = ""
        self.cell_style = "0"
        self.cell_column = 0
        self.text: list[str] = []
        self.collect = False
        # No namespace processing (it costs a third of the time): tags are compared by their local name,
        # whatever prefix the writer chose ("c" or "x:c").
        self.local: dict[str, str] = {}
        parser = _guarded_parser()
        parser.StartElementHandler = self.start
        parser.EndElementHandler = self.end
        parser.CharacterDataHandler = self.characters
        parser.buffer_text = True
        self.parser = parser

    def feed(self, chunk: bytes, final: bool) -> None:
        self.parser.Parse(chunk, final)

    def take(self) -> list[tuple[int, list]]:
        done, self.done = self.done, []
        return done

    def name(self, tag: str) -> str:
        try:
            return self.local[tag]
        except KeyError:
            local = self.local[tag] = tag.rpartition(":")[2]
            return local

    def start(self, tag, attrs):
        name = self.name(tag)
        if name == "c":
            self.cell_type = attrs.get("t", "n")
            self.cell_style = attrs.get("s", "0")
            reference = attrs.get("r")
            self.cell_column = column_index(reference) if reference else len(self.row)
            self.text = []
        elif name in ("v", "t"):
            self.collect = True
        elif name == "row":
            self.row = []
            self.row_number = int(attrs.get("r", self.row_number + 1))

    def characters(self, data):
        if self.collect:
            self.text.append(data)

    def end(self, tag):
        name = self.name(tag)
        if name in ("v", "t"):
            self.collect = False
        elif name == "c":
            value = self.value("".join(self.text))
            row = self.row
            while len(row) < self.cell_column:
                row.append(None)
            row.append(value)
        elif name == "row":
            self.done.append((self.row_number, self.row))

    def value(self, raw: str):
        kind = self.cell_type
        if kind == "s":
            return self.strings[int(raw)] if raw else None
        if kind in ("inlineStr", "str"):
            return raw
        if kind == "b":
            return raw == "1"
        if kind == "e" or raw == "":
            return None
        number = float(raw)
        if self.cell_style in self.date_styles:
            return from_excel(number)
        return int(number) if number.is_integer() else number
