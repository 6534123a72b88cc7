"""A JSON array of objects (``[{...}, {...}]``, pretty-printed or not) read as a table, one object at a time.

The array is parsed incrementally by ``ijson``, so a large file is never held whole. Published files are not
always strict JSON: CausalityCheck's hold raw newlines inside strings, which Python's ``json.loads(text,
strict=False)`` reads and a strict parser refuses. ``ControlCharacters`` escapes such characters inside
strings on the way in (a raw newline becomes ``\\n``), so those files read as their authors' scripts read them.

A row's ``line`` is the object's place in the array (the first object is 1): a pretty-printed object spans
many lines, and what a person looks for is "the 12th object".
"""

import re
from collections.abc import Iterator

from .errors import ImportFileError, RowError

READ_BYTES = 256 * 1024
# Deeper nesting is refused as it is read: the parser's memory grows with the square of the depth, so a small
# file of deeply nested brackets could exhaust the machine, and no published record nests this deep.
MAX_DEPTH = 64
# Inside a string: a quote ends it, a backslash escapes the next byte, a control character is escaped.
# Outside: brackets and braces count the depth.
_SPECIAL = re.compile(rb'["\\\x00-\x1f\[\]{}]')
_ESCAPES = {0x0A: b"\\n", 0x0D: b"\\r", 0x09: b"\\t", 0x08: b"\\b", 0x0C: b"\\f"}


class ControlCharacters:
    """A binary file whose ``read`` gives its bytes with every raw control character inside a JSON string
    escaped (outside strings they are whitespace and stay). Keeps its state from one read to the next."""

    def __init__(self, handle):
        self.handle = handle
        self.in_string = False
        self.offset = 0  # of the next byte read, in the file
        self.escaped_at = -1  # the offset of the byte a backslash escapes
        self.depth = 0  # of brackets and braces open outside strings

    def read(self, size: int = -1) -> bytes:
        chunk = self.handle.read(READ_BYTES if size is None or size < 0 else size)
        if not chunk:
            return b""
        out = []
        start = 0
        base = self.offset
        for match in _SPECIAL.finditer(chunk):
            position = match.start()
            if base + position == self.escaped_at:
                continue  # an escaped quote, backslash or (invalid) control character
            byte = chunk[position]
            if byte == 0x22:  # "
                self.in_string = not self.in_string
            elif not self.in_string:
                if byte in b"[{":
                    self.depth += 1
                    if self.depth > MAX_DEPTH:
                        raise ImportFileError(
                            [RowError(0, "", f"the JSON nests deeper than {MAX_DEPTH} levels")]
                        )
                elif byte in b"]}":
                    self.depth -= 1
                continue
            elif byte == 0x5C:  # \
                self.escaped_at = base + position + 1
            else:
                out.append(chunk[start:position])
                out.append(_ESCAPES.get(byte) or b"\\u%04x" % byte)
                start = position + 1
        self.offset += len(chunk)
        if not out:
            return chunk
        out.append(chunk[start:])
        return b"".join(out)


def starts_an_array(head: bytes) -> bool:
    """Whether text (its first bytes, a BOM allowed) opens a JSON array."""
    return head.removeprefix(b"\xef\xbb\xbf").lstrip()[:1] == b"["


def array_records(handle, errors: list[RowError]) -> Iterator[tuple[int, dict]]:
    """``(number, object)`` for each object of the array in the binary file ``handle`` (numbered from 1); an
    element that is not an object becomes an error. A file that stops being JSON part way is refused, naming
    the last object read whole."""
    import ijson

    number = 0
    try:
        for number, record in enumerate(
            ijson.items(ControlCharacters(handle), "item", use_float=True), start=1
        ):
            if not isinstance(record, dict):
                errors.append(RowError(number, "", f"expected a JSON object, found {_kind(record)}"))
                continue
            yield number, {str(key).strip(): value for key, value in record.items()}
    except ijson.JSONError as exc:
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        after = f"after object {number}" if number else "before its first object"
        raise ImportFileError([RowError(0, "", f"malformed JSON array {after} ({reason})")]) from None
    except UnicodeDecodeError as exc:
        raise ImportFileError(
            [RowError(0, "", f"the JSON array is not UTF-8 (byte 0x{exc.object[exc.start]:02x})")]
        ) from None


def _kind(value) -> str:
    return {list: "an array", str: "a string", bool: "a boolean", type(None): "null"}.get(
        type(value), "a number"
    )
