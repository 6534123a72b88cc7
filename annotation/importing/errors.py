"""What can be wrong with an imported file: a row's problem, or the whole file's."""

from dataclasses import dataclass


@dataclass(frozen=True)
class RowError:
    line: int
    field: str
    reason: str

    def __str__(self) -> str:
        where = f"line {self.line}" if self.line else "file"
        return f"{where}, {self.field}: {self.reason}" if self.field else f"{where}: {self.reason}"

    def as_dict(self) -> dict:
        return {"line": self.line, "field": self.field, "reason": self.reason}


class ImportFileError(Exception):
    """The file cannot be read at all (empty, of no known format, no question column)."""

    def __init__(self, errors: list[RowError]):
        self.errors = errors
        super().__init__("; ".join(str(error) for error in errors))
