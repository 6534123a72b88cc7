"""CausalityCheck's published test cells (``dataset/test data/<VARIANT>-<TASK>_cleaned.json``): the already-derived
items of one task × variant cell, read as they are and stored as the cell's items.

Every file is a JSON array (some not strict JSON: raw newlines inside strings), read by the import's table reader.
Each object has the seed's ``id``, ``context``, ``question``, ``choice_1`` … ``choice_4`` and what its task asks:

- OP (original problem): ``answer`` (1–4): the item asks the seed's question, gold its letter;
- AJ (answerable judging): ``answerable`` (0/1) and no ``answer``: the item asks whether the question can be
  answered from the context, gold answerable / unanswerable;
- PJ (process judging): ``answer``, ``causal_chain`` and ``correctness`` (0/1): the item asks whether the chain
  shown is correct (0: it is a corrupted chain), gold valid / invalid chain; the chain is the item's answer;
- DV (causal validity): ``answer`` and ``verdict`` (1–4): the item asks which of the four verdicts fits the
  conclusion (the chosen option), gold that verdict.

The published variant codes are PS, PU, ID and VCP (the platform's VCR), the task codes OP, AJ, PJ and DV (the
platform's CVA). The cell comes from the file's name or from a ``cell`` column (or ``variant`` and ``task``).
Rows that share a context and question are distinct test items (other chains or labels), never merged. Every
other field is kept in the item's metadata (``published``)."""

import io
import re
import zipfile
from pathlib import Path, PurePosixPath

from django.db import transaction

from annotation.importing import limits
from annotation.importing.errors import ImportFileError
from annotation.importing.mapping import fold
from annotation.importing.published import PublishedReport, PublishedRowsRefused
from annotation.importing.tables import open_table
from annotation.models import Item, Project
from annotation.services import NOBODY, NewItem, items_create

from .seeds import DESIGN, LETTERS, VERDICTS, cell_code

CHOICES = ("choice_1", "choice_2", "choice_3", "choice_4")
PUBLISHED_VARIANTS = {"PS": "ps", "PU": "pu", "ID": "id", "VCP": "vcr", "VCR": "vcr"}
PUBLISHED_TASKS = {"OP": "op", "AJ": "aj", "PJ": "pj", "DV": "cva", "CVA": "cva"}
# The task's own fields: what the item asks and its gold label.
TASK_FIELDS = {
    "op": ("answer",),
    "aj": ("answerable",),
    "pj": ("answer", "causal_chain", "correctness"),
    "cva": ("answer", "verdict"),
}
_CELL = re.compile(r"(?<![A-Za-z])(VCP|VCR|PS|PU|ID)-(OP|AJ|PJ|DV|CVA)(?![A-Za-z])", re.IGNORECASE)
SOURCE = "causalitycheck:published"


def cell_of_name(text: str) -> tuple[str, str] | None:
    """(task, variant) of a published cell's name ("VCP-PJ_cleaned.json", "PS-AJ"), or None."""
    match = _CELL.search(text or "")
    if not match:
        return None
    return PUBLISHED_TASKS[match.group(2).upper()], PUBLISHED_VARIANTS[match.group(1).upper()]


def is_published_cell(columns: list[str], filename: str) -> bool:
    """Whether a table is a published test cell: a seed's four choices and a cell named by the file or a column."""
    folded = {fold(column) for column in columns}
    if not all(choice in folded for choice in CHOICES):
        return False
    return cell_of_name(Path(filename).name) is not None or "cell" in folded or {"variant", "task"} <= folded


def published_cell_import(*, project: Project, data: bytes, filename: str) -> PublishedReport:
    """Every row of a published test cell as an item of its cell; all or none (refused rows are listed)."""
    specs, report = published_cell_read(data, filename)
    items = [_new_item(spec, filename) for spec in specs]
    # A row is an item of its file's row: the same file imported again would make each one twice.
    taken = set(
        Item.objects.filter(
            project=project, external_id__in=[item.external_id for item in items]
        ).values_list("external_id", flat=True)
    )
    for spec, item in zip(specs, items):
        if item.external_id in taken:
            report.refuse(
                spec["line"], "", f"the item of this record of {filename} is already in the project"
            )
    report.refused.sort(key=lambda error: error.line)
    if report.refused:
        raise PublishedRowsRefused(filename, report)
    with transaction.atomic():
        made = items_create(project=project, items=items)
    report.items = len(made)
    report.groups = len({spec["cell"] for spec in specs})
    return report


def published_cell_read(data: bytes, filename: str) -> tuple[list[dict], PublishedReport]:
    table = open_table(data, filename)
    from_name = cell_of_name(Path(filename).name)
    report = PublishedReport(group_word="cells")
    specs = []
    for line, record in table.rows:
        report.records += 1
        # The record's own keys: an object may have a key the first objects, which named the columns, lack.
        columns = {fold(column): column for column in reversed(list(record))}
        cell = _cell_of_row(record, columns) or from_name
        if cell is None:
            report.refuse(
                line, "cell", "names no cell (use a file name such as PS-AJ_cleaned.json or a cell column)"
            )
            continue
        spec = _row_spec(record, columns, cell, line, report)
        if spec is not None:
            specs.append(spec)
    report.refused.extend(table.errors)
    report.refused.sort(key=lambda error: error.line)
    if not report.records and not report.refused:
        report.refuse(0, "", "the file has no rows")
    return specs, report


def _cell_of_row(record: dict, columns: dict) -> tuple[str, str] | None:
    if "cell" in columns and record.get(columns["cell"]):
        return cell_of_name(str(record[columns["cell"]]))
    if "variant" in columns and "task" in columns:
        return cell_of_name(f"{record.get(columns['variant'])}-{record.get(columns['task'])}")
    return None


def _row_spec(
    record: dict, columns: dict, cell: tuple[str, str], line: int, report: PublishedReport
) -> dict | None:
    task, variant = cell

    def value(name):
        return record.get(columns[name]) if name in columns else None

    texts = {}
    for name in ("context", "question", *CHOICES):
        text = value(name)
        if not isinstance(text, str) or not text.strip():
            report.refuse(line, name, "is missing or empty")
            return None
        texts[name] = text.strip()
    labels = {}
    for name in TASK_FIELDS[task]:
        raw = value(name)
        if name == "causal_chain":
            if not isinstance(raw, str) or not raw.strip():
                report.refuse(line, name, "is missing or empty (a process-judging row shows a causal chain)")
                return None
            labels[name] = raw.strip()
            continue
        allowed = (0, 1) if name in ("answerable", "correctness") else (1, 2, 3, 4)
        number = _integer(raw)
        if number not in allowed:
            shown = "0/1" if len(allowed) == 2 else "1–4"
            report.refuse(line, name, f"must be {shown}, not {raw!r}")
            return None
        labels[name] = number
    used = {"id", "context", "question", *CHOICES, *TASK_FIELDS[task], "cell", "variant", "task"}
    published = {
        column: record[column]
        for folded, column in columns.items()
        if folded not in used and record.get(column) not in (None, "")
    }
    report.used.update(column for folded, column in columns.items() if folded in used)
    report.kept.update(published)
    return {
        "line": line,
        "task": task,
        "variant": variant,
        "cell": cell_code(task, variant),
        "seed": _id_text(value("id")),
        "texts": texts,
        "labels": labels,
        "published": published,
    }


def _integer(value) -> int | None:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, int):
        return value
    text = str(value or "").strip()
    return int(text) if text.isdigit() else None


def _id_text(value) -> str:
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return "" if value is None else str(value).strip()


def _gold(spec: dict) -> tuple[str, str, str]:
    """The item's role, gold label and reference answer for its task."""
    labels, options = spec["labels"], [spec["texts"][choice] for choice in CHOICES]
    task = spec["task"]
    if task == "op":
        return "original", LETTERS[labels["answer"] - 1], options[labels["answer"] - 1]
    if task == "aj":
        answerable = labels["answerable"] == 1
        return ("answerable", "answerable", "") if answerable else ("unanswerable", "unanswerable", "")
    if task == "pj":
        correct = labels["correctness"] == 1
        role, label = ("correct", "valid_chain") if correct else ("corrupted", "invalid_chain")
        return role, label, labels["causal_chain"]
    verdict = list(VERDICTS)[labels["verdict"] - 1]
    return verdict, verdict, options[labels["answer"] - 1]  # the conclusion is the option chosen


def _new_item(spec: dict, filename: str) -> NewItem:
    role, label, answer = _gold(spec)
    answer_index = spec["labels"].get("answer")
    stem = Path(filename).stem
    metadata = {
        "design": DESIGN,
        "task": spec["task"],
        "variant": spec["variant"],
        "cell": spec["cell"],
        "role": role,
        "seed": spec["seed"],
        "published_cell": stem,
        "line": spec["line"],
        "labels": spec["labels"],
    }
    if spec["published"]:
        metadata["published"] = spec["published"]
    return NewItem(
        question=spec["texts"]["question"],
        context=spec["texts"]["context"],
        causal_class=label,
        reference_answer=answer,
        origin=Item.Origin.GENERATED if spec["cell"] != "PS-OP" else Item.Origin.NATURAL,
        source=SOURCE,
        # Rows may share a seed, a context and a question: the file's row makes each one its own item.
        external_id=f"{stem}/{spec['line']}"[:200],
        author=NOBODY,
        answer_provenance={"kind": "import", "source": SOURCE, "file": filename[:200]},
        review=True,
        metadata=metadata,
        options=[
            {"text": spec["texts"][choice], "role": "correct" if answer_index == number else "other"}
            for number, choice in enumerate(CHOICES, start=1)
        ],
    )


# --- published results: a model's answers per cell -------------------------------------------------------

_RESULT = re.compile(r"^(VCP|VCR|PS|PU|ID)-(OP|AJ|PJ|DV|CVA)res-(.+?)\.json$", re.IGNORECASE)
# The key of each task's label in a result file, and the letter of the task's question each value answers
# (``questions.task_question``: answerable judging and process judging ask A) yes / correct, B) no / incorrect).
RESULT_KEYS = {"op": "answer", "aj": "answerable", "pj": "correctness", "cva": "verdict"}
RESULT_CONDITION = "zero-shot"


def result_file_cell(filename: str) -> tuple[str, str, str] | None:
    """(task, variant, model) of a published result file ``<VARIANT>-<TASK>res-<model>.json``, or None."""
    match = _RESULT.match(Path(filename).name)
    if not match:
        return None
    return PUBLISHED_TASKS[match.group(2).upper()], PUBLISHED_VARIANTS[match.group(1).upper()], match.group(3)


def answer_letter(task: str, value) -> str:
    """The letter of the task's question a published label value answers; the value as text when it is none
    (it is then unreadable, as a live run's answer that names no option)."""
    number = _integer(value)
    if task in ("aj", "pj") and number in (0, 1):
        return "A" if number == 1 else "B"
    if task in ("op", "cva") and number in (1, 2, 3, 4):
        return LETTERS[number - 1]
    return "" if value is None else str(value)


def published_results_read(*, records: dict, files: list) -> dict | None:
    """The answers of CausalityCheck's published result files, matched to the release's items of each cell:
    {"responses": [(file, line, (release_item, model, condition, repetition), answer)], "errors": [(file, line,
    field, reason)], "rows": {file: rows}, "refused": {file: rows}, "columns": {file: {role: column}}, "ignored":
    {file: [column]}, "files": the files read}. None when the files are not in that layout. A .zip of a model's
    result folder (a page takes one file) stands for the files it holds. Every row read is either a response (stored,
    or a collision the import reports as a row of any results file) or an error.

    A result file's k-th object answers the k-th row of the cell's published file (its ``id`` is the seed's,
    which rows of a cell share), so it is matched to the released item from that row; an item imported some
    other way is matched by its seed's id when only one item of the cell has it."""
    files = _unpacked(files)
    cells = [result_file_cell(result_file.name) for result_file in files]
    if not files or not any(cells):
        return None
    from evaluation.runs.conditions import record_metadata

    by_line: dict[tuple[str, int], int] = {}
    by_seed: dict[tuple[str, str], list[int]] = {}
    seeds: dict[int, str] = {}
    for pk, record in records.items():
        meta = record_metadata(record)
        if not meta.get("cell"):
            continue
        seeds[pk] = str(meta.get("seed", ""))
        if meta.get("line"):
            by_line[(meta["cell"], int(meta["line"]))] = pk
        by_seed.setdefault((meta["cell"], seeds[pk]), []).append(pk)
    responses, errors, rows, refused, used, ignored = [], [], {}, {}, {}, {}
    for result_file, cell in zip(files, cells):
        if cell is None:
            errors.append(
                (
                    result_file.name,
                    0,
                    "",
                    "not a CausalityCheck result file (<VARIANT>-<TASK>res-<model>.json)",
                )
            )
            continue
        task, variant, model = cell
        code, key = cell_code(task, variant), RESULT_KEYS[task]
        try:
            table = open_table(result_file.data, result_file.name)
            read = list(table.rows)
        except Exception as exc:  # noqa: BLE001 - ImportFileError or a damaged file: reported, never raised
            errors.append((result_file.name, 0, "", str(exc)))
            continue
        errors += [(result_file.name, error.line, error.field, error.reason) for error in table.errors]
        rows[result_file.name] = len(read)
        refused[result_file.name] = 0
        used[result_file.name] = {"item": "id", "response": key}
        ignored[result_file.name] = [column for column in table.columns if column not in ("id", key)]
        for line, record in read:
            seed = _id_text(record.get("id"))
            pk = by_line.get((code, line))
            if pk is None or seeds.get(pk) != seed:
                candidates = by_seed.get((code, seed), [])
                pk = candidates[0] if len(candidates) == 1 else None
            if pk is None:
                errors.append(
                    (
                        result_file.name,
                        line,
                        "id",
                        f"seed {seed!r} matches no single item of cell {code} in the release",
                    )
                )
                refused[result_file.name] += 1
                continue
            if key not in record:
                errors.append((result_file.name, line, key, f"missing (the label of cell {code})"))
                refused[result_file.name] += 1
                continue
            answer = answer_letter(task, record[key])
            responses.append((result_file.name, line, (pk, model[:100], RESULT_CONDITION, 1), answer))
    return {
        "files": files,
        "responses": responses,
        "errors": errors,
        "rows": rows,
        "refused": refused,
        "columns": used,
        "ignored": ignored,
    }


def _unpacked(files: list) -> list:
    """``files``, each .zip that holds result files replaced by every file it holds (the others then name no
    cell, and are reported)."""
    unpacked = []
    for result_file in files:
        held = _zip_members(result_file) if result_file.name.lower().endswith(".zip") else None
        unpacked.extend(held or [result_file])
    return unpacked


def _zip_members(result_file) -> list | None:
    """The files in a zip of result files, named ``<zip>/<path>``; None for a zip of anything else (the common
    import reads it, or says why it cannot)."""
    from evaluation.runs.imported import ResultFile

    try:
        archive = zipfile.ZipFile(io.BytesIO(result_file.data))
        limits.zip_checked(archive, result_file.name)
    except (zipfile.BadZipFile, ImportFileError):
        return None
    with archive:
        members = [
            info
            for info in archive.infolist()
            if not info.is_dir()
            and not PurePosixPath(info.filename).name.startswith(".")
            and "__MACOSX" not in PurePosixPath(info.filename).parts
        ]
        if not any(result_file_cell(info.filename) for info in members):
            return None
        return [
            ResultFile(f"{result_file.name}/{info.filename}", archive.read(info), "responses")
            for info in members
        ]
