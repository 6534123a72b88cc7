"""Results from elsewhere: a benchmark run made from files instead of model calls.

A researcher brings a published evaluation's outputs — model responses, a judge's scores, a judge's
rankings — as CSV / TSV / XLSX / JSONL files (read by ``annotation.importing.tables``). Each file's kind
is told by its columns, its columns are found by the names people use (or ``--columns``), and every
row is matched to an item of the release split (by the release record's id, the imported external id,
or the exact question text). Any unmatched item, unknown model or condition, or score out of range is
listed with its file and row, and nothing is written. Otherwise the run is stored as a run the platform
made, marked as imported with each file's SHA-256; its worker then computes BERTScore locally, and the
run's report, downloads and *Compare* work as for any run.

Nothing is overwritten: a row that says the same thing as an earlier one (the same response, or the same
judge's score of the same answer on the same criterion) is a *duplicate* and stored once; a row that says
something else is a *conflict*, listed with its line and the line it collides with, and the person chooses
what to keep (``conflicts``): the first, the last, or both — the later row then stands as a judge of its own
("judge (2)"), or for a response as the next repetition. Several judges, and the reference answer scored
within each model's evaluation, are separate rows and no conflict. The run's ``imported`` record gives,
per file, the rows read, stored, conflicting, duplicated and refused, and the conflicts themselves.
"""

import hashlib
import itertools
import re
from collections import Counter
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass, field

from django.db import transaction
from django.utils import timezone

from annotation.designs import design_for
from annotation.importing.errors import ImportFileError
from annotation.importing.funnel import text_key
from annotation.importing.mapping import RESULTS, MappingError, fold, parse_columns, remember, remembered
from annotation.importing.tables import UNREADABLE, open_table, unreadable
from generation.models import ModelEndpoint

from ..models import EvalResponse, EvalRun, JudgeScore, Ranking, ReleaseItem
from .conditions import (
    OPEN,
    REFERENCE,
)
from .grading import response_grade

RESPONSES, SCORES, RANKINGS = "responses", "scores", "rankings"
KINDS = (RESPONSES, SCORES, RANKINGS)
# What to do with rows that collide with an earlier row: refuse the import and list them (""), or keep the
# first, the last, or both.
KEEP_FIRST, KEEP_LAST, KEEP_BOTH = "first", "last", "both"
POLICIES = (KEEP_FIRST, KEEP_LAST, KEEP_BOTH)
KNOWN = {
    "item": ("item", "item_id", "id", "question_id", "external_id", "id_pergunta", "qid", "uid"),
    "question": ("question", "pergunta", "questao"),
    "model": ("model", "modelo", "llm", "system", "sistema", "candidate_model"),
    "condition": (
        "condition",
        "condicao",
        "setting",
        "strategy",
        "estrategia",
        "prompt",
        "prompting",
        "configuracao",
        "cenario",
    ),
    "response": (
        "response",
        "model_response",
        "resposta_modelo",
        "resposta_do_modelo",
        "model_answer",
        "output",
        "prediction",
        "generated_answer",
        "resposta_gerada",
        "answer",
        "resposta",
    ),
    "repetition": ("repetition", "repeticao", "rep", "sample", "amostra"),
    "target": (
        "answer_of",
        "whose_answer",
        "evaluated",
        "avaliado",
        "resposta_de",
        "target",
        "candidate",
        "source",
        "fonte",
    ),
    "criterion": ("criterion", "criterio", "metric", "metrica", "aspect", "aspecto"),
    "score": ("score", "nota", "pontuacao", "rating", "overall", "overall_score", "nota_geral"),
    "justification": (
        "justification",
        "justificativa",
        "rationale",
        "explanation",
        "explicacao",
        "comment",
        "comentario",
    ),
    "judge": ("judge", "juiz", "judge_model", "modelo_juiz", "avaliador", "evaluator"),
    "ranking": ("ranking", "order", "ordem", "classificacao", "ranked"),
    "shown": ("shown", "order_shown", "shown_order", "ordem_apresentada", "presentation_order"),
}
REFERENCE_WORDS = {
    "reference",
    "referencia",
    "gold",
    "ground_truth",
    "groundtruth",
    "human",
    "humano",
    "gabarito",
}
# Criterion names in Portuguese, for the paper's four.
CRITERION_ALIASES = {
    "aderencia": "adherence",
    "fluencia": "fluency",
    "coerencia": "coherence",
    "relevancia": "relevance",
}
ORDINALS = {
    "first": 1,
    "second": 2,
    "third": 3,
    "fourth": 4,
    "fifth": 5,
    "primeiro": 1,
    "segundo": 2,
    "terceiro": 3,
    "quarto": 4,
    "quinto": 5,
}
_PLACE = re.compile(r"^(?:(?:rank|place|lugar|posicao|pos)_?(\d+)|(\d+)(?:st|nd|rd|th|o|a|_lugar)?)$")
_SEPARATORS = re.compile(r"\s*(?:>|;|,|\|)\s*")
_SERIES = re.compile(r"\s*(?:·|/|\|)\s*")
OVERALL = "overall"


@dataclass(frozen=True)
class ResultError:
    file: str
    line: int
    field: str
    reason: str

    def __str__(self) -> str:
        where = f"{self.file}, row {self.line}" if self.line else self.file
        return f"{where}, {self.field}: {self.reason}" if self.field else f"{where}: {self.reason}"


@dataclass(frozen=True)
class Collision:
    """A row that collides with an earlier one: the same thing said again (``duplicate``), or said otherwise."""

    file: str
    line: int
    other_file: str
    other_line: int
    what: str
    duplicate: bool = False
    kind: str = RESPONSES

    @property
    def reason(self) -> str:
        """In the words of ``annotation.importing.reasons`` (a page reads it in its language)."""
        other = f"{self.other_file}, row {self.other_line}"
        if self.duplicate:
            return f"repeats {other} ({self.what}); stored once"
        noun = {RESPONSES: "response", SCORES: "score", RANKINGS: "ranking"}[self.kind]
        return (
            f"a second {noun} of {self.what}, other than {other}: choose to keep the first, the last or both"
        )

    def __str__(self) -> str:
        return f"{self.file}, row {self.line}: {self.reason}"

    def as_dict(self) -> dict:
        return {
            "file": self.file,
            "line": self.line,
            "other_file": self.other_file,
            "other_line": self.other_line,
            "what": self.what,
            "duplicate": self.duplicate,
            "kind": self.kind,
            "reason": self.reason,
        }


class ResultsRejected(Exception):
    """What is wrong with the files, by file and row; nothing was imported. ``conflicts``: the rows that collide
    with earlier rows, when no choice of what to keep was made."""

    def __init__(self, errors: list[ResultError], conflicts: list | None = None):
        self.errors = errors
        self.conflicts = conflicts or []
        shown = "\n".join(f"  {error}" for error in errors[:30])
        more = f"\n  … and {len(errors) - 30} more" if len(errors) > 30 else ""
        super().__init__(f"{len(errors)} problem(s); nothing was imported:\n{shown}{more}")


@dataclass
class ResultFile:
    name: str
    data: bytes
    kind: str = ""  # told by the columns when empty

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.data).hexdigest()


@dataclass
class _Entry:
    value: object
    file: str
    line: int


@dataclass
class _Parsed:
    policy: str = ""
    # (release_item, model, condition, repetition) → text
    responses: dict = field(default_factory=dict)
    # (release_item, model|None, condition|None, repetition, under|None, judge, criterion) → (score, justification)
    scores: dict = field(default_factory=dict)
    # (release_item, model, repetition, judge) → (ranking, shown, justification)
    rankings: dict = field(default_factory=dict)
    judges: Counter = field(default_factory=Counter)
    files: list = field(default_factory=list)
    collisions: list = field(default_factory=list)
    refused: Counter = field(default_factory=Counter)  # file → rows refused

    def put(self, store: dict, cells: dict, file: str, line: int, what: str, relabel, kind: str) -> None:
        """Store one row's ``cells`` (key → value) without overwriting: a cell already held with the same value is
        a duplicate, with another value a conflict, settled by the policy (``relabel(key, n)``: the key of the
        n-th of both)."""
        clashing = {}
        for key, value in cells.items():
            held = store.get(key)
            if held is None:
                continue
            if held.value == value:
                self.collisions.append(Collision(file, line, held.file, held.line, what, True, kind))
            else:
                clashing[key] = held
        fresh = {key: value for key, value in cells.items() if key not in store}
        if clashing:
            held = next(iter(clashing.values()))
            self.collisions.append(Collision(file, line, held.file, held.line, what, False, kind))
            if self.policy == KEEP_LAST:
                fresh.update({key: cells[key] for key in clashing})
            elif self.policy == KEEP_BOTH:
                n = 2
                while any(relabel(key, n) in store for key in cells):
                    n += 1
                fresh = {relabel(key, n): value for key, value in cells.items()}
        for key, value in fresh.items():
            store[key] = _Entry(value, file, line)

    def stored_lines(self) -> Counter:
        lines = {
            (entry.file, entry.line)
            for store in (self.responses, self.scores, self.rankings)
            for entry in store.values()
        }
        return Counter(file for file, _line in lines)


def run_import_results(
    *,
    project,
    release,
    name: str,
    files: list[ResultFile],
    split: str = ReleaseItem.Split.TEST,
    columns: str = "",
    user=None,
    enqueue: bool = True,
    conflicts: str = "",
    progress: Callable[[str], None] | None = None,
) -> EvalRun:
    """Check every file, then store the run with its responses, scores and rankings in one transaction.
    ``progress`` is told each step (reading a file, storing), as a worker's heartbeat.

    Raises ``ResultsRejected`` listing every problem (file, row, field, reason), and every row that collides
    with an earlier one when ``conflicts`` (keep ``first``, ``last`` or ``both``) is not given; then nothing
    is written.
    """
    from .harness_results import harness_result_files  # it builds on this module's file and error types

    files = harness_result_files(files)  # lm-eval and Inspect logs, read into responses files
    errors: list[ResultError] = []
    if conflicts and conflicts not in POLICIES:
        raise ResultsRejected(
            [ResultError("conflicts", 0, "", f"{conflicts!r}: choose one of {', '.join(POLICIES)}")]
        )
    if release.project_id != project.pk:
        raise ResultsRejected([ResultError("release", 0, "", "the release belongs to another project")])
    if not release.is_ready:
        raise ResultsRejected([ResultError("release", 0, "", f"{release.tag} is {release.status}")])
    items = _Items(release, split)
    if not items.by_id:
        raise ResultsRejected(
            [
                ResultError(
                    "release",
                    0,
                    "split",
                    f"{release.tag} has no items in its {split!r} split;"
                    " cut a release with --splits 0,0,1 to evaluate every item",
                )
            ]
        )
    try:
        given = parse_columns(columns, fields=tuple(KNOWN)) if columns else {}
    except MappingError as exc:
        raise ResultsRejected([ResultError("columns", 0, "", str(exc))]) from exc
    if given:  # kept for the next import of results, whether this one goes in or not
        remember(project, RESULTS, {"columns": given})
    # The columns named now, then those the project named last time (where a file has them).
    overrides = {**(remembered(project, RESULTS).get("columns") or {}), **given}
    published = design_for(project).published_results(records=items.records, files=files)
    if published is not None:  # the design's own result files (CausalityCheck's answers per cell)
        return _store_published(
            project, release, split, name, files, published, user, enqueue, conflicts, items
        )
    say = progress or (lambda stage: None)
    parsed = _Parsed(policy=conflicts)
    tables = []
    with ExitStack() as stack:
        for result_file in files:
            try:
                table = open_table(result_file.data, result_file.name, stack=stack)
            except ImportFileError as exc:
                errors += [ResultError(result_file.name, e.line, e.field, e.reason) for e in exc.errors]
                continue
            kind = result_file.kind or _kind_of(table.columns, project, overrides)
            if not kind:
                errors.append(
                    ResultError(
                        result_file.name,
                        1,
                        "",
                        "cannot tell the kind of file from its columns "
                        f"({', '.join(table.columns)}); name it responses=FILE, scores=FILE "
                        "or rankings=FILE",
                    )
                )
                continue
            tables.append((result_file, kind, table))
        found = {column for _file, _kind, table in tables for column in table.columns}
        errors += [
            ResultError("columns", 0, role, f"{role}={column}: no file has a column {column!r}")
            for role, column in given.items()
            if column not in found and tables
        ]
        # Responses first: scores and rankings name the models and conditions the responses bring.
        for result_file, kind, table in sorted(
            tables, key=lambda entry: [RESPONSES, SCORES, RANKINGS].index(entry[1])
        ):
            reader = {RESPONSES: _read_responses, SCORES: _read_scores, RANKINGS: _read_rankings}[kind]
            say(f"reading {result_file.name}")
            used = _used(table.columns, overrides, kind)
            try:
                count = reader(result_file.name, table, used, items, parsed, errors, project)
            except UNREADABLE as exc:
                errors += [ResultError(result_file.name, 0, "", str(unreadable(exc)))]
                continue
            except ImportFileError as exc:  # a limit or a value refused while the rows were read
                errors += [ResultError(result_file.name, e.line, e.field, e.reason) for e in exc.errors]
                continue
            errors += [ResultError(result_file.name, e.line, e.field, e.reason) for e in table.errors]
            parsed.files.append(
                {
                    "name": result_file.name,
                    "kind": kind,
                    "sha256": result_file.sha256,
                    "rows": count,
                    "columns": used,
                    "ignored": _ignored(table.columns, used, project),
                }
            )
    if not parsed.responses and not errors:
        errors.append(ResultError("files", 0, "", "no responses: give a file of model responses"))
    conflicting = [] if conflicts else [c for c in parsed.collisions if not c.duplicate]
    errors += [ResultError(c.file, c.line, "", c.reason) for c in conflicting]
    if errors:
        raise ResultsRejected(sorted(errors, key=lambda e: (e.file, e.line)), conflicts=conflicting)
    _count(parsed, errors)
    say("storing")
    return _store(project, release, split, name, parsed, user, enqueue)


def _count(parsed: _Parsed, errors: list) -> None:
    """Each file's rows read, stored, conflicting, duplicated and refused."""
    stored = parsed.stored_lines()
    for entry in parsed.files:
        mine = [collision for collision in parsed.collisions if collision.file == entry["name"]]
        entry.update(
            stored=stored.get(entry["name"], 0),
            conflicting=len({c.line for c in mine if not c.duplicate}),
            duplicates=len({c.line for c in mine if c.duplicate}),
            refused=parsed.refused.get(entry["name"], 0),
        )


PREVIEW_ROWS = 5
PREVIEW_SAMPLE = 500


def results_preview(*, project, files: list[ResultFile], columns: str = "") -> dict:
    """The mapping step of an import of results: each file's kind, columns and first rows; the role each column
    is proposed for (the columns named, the project's last, then the names people use); and the model names
    the responses would add to the project. Nothing is stored. ``problems``: what cannot be read."""
    from annotation.importing.preview import known_model_names

    try:
        given = parse_columns(columns, fields=tuple(KNOWN)) if columns else {}
    except MappingError as exc:
        return {"problems": [str(exc)], "files": [], "roles": [], "new_models": []}
    overrides = {**(remembered(project, RESULTS).get("columns") or {}), **given}
    shown, problems, every_column, models = [], [], [], set()
    with ExitStack() as stack:
        for result_file in files:
            try:
                table = open_table(result_file.data, result_file.name, stack=stack)
                sample = [record for _line, record in itertools.islice(table.rows, PREVIEW_SAMPLE)]
            except ImportFileError as exc:
                problems += [
                    str(ResultError(result_file.name, e.line, e.field, e.reason)) for e in exc.errors
                ]
                continue
            except UNREADABLE as exc:
                problems.append(str(ResultError(result_file.name, 0, "", str(unreadable(exc)))))
                continue
            kind = result_file.kind or _kind_of(table.columns, project, overrides)
            used = _used(table.columns, overrides, kind)
            if kind == RESPONSES:
                models |= {_cell(record, used, "model")[:100] or "model" for record in sample}
            every_column += [column for column in table.columns if column not in every_column]
            shown.append(
                {
                    "name": result_file.name,
                    "kind": kind,
                    "columns": table.columns,
                    "used": used,
                    "ignored": _ignored(table.columns, used, project),
                    "rows": [
                        [record.get(column) for column in table.columns] for record in sample[:PREVIEW_ROWS]
                    ],
                }
            )
    chosen = {}
    for entry in shown:
        for role, column in entry["used"].items():
            chosen.setdefault(role, column)
    known = {fold(name) for name in known_model_names(project)}
    return {
        "problems": problems,
        "files": shown,
        "columns": every_column,
        "roles": [{"name": role, "column": chosen.get(role, "")} for role in KNOWN],
        "new_models": sorted(model for model in models if fold(model) not in known),
    }


class _Items:
    """The release split's items, found by record id, the item's external id, or the question's text."""

    def __init__(self, release, split):
        self.by_id, self.by_text, self.records = {}, {}, {}
        rows = ReleaseItem.objects.filter(release=release, split=split).values_list(
            "pk", "data", "item__external_id"
        )
        for pk, data, external_id in rows:
            self.records[pk] = data
            self.by_id.setdefault(str(data.get("id", "")), pk)
            if external_id:
                self.by_id.setdefault(external_id, pk)
            self.by_text.setdefault(text_key(data.get("question", "")), pk)

    def label(self, pk: int) -> str:
        return str(self.records[pk].get("id", pk))

    def find(self, value) -> int | None:
        text = str(value if value is not None else "").strip()
        if isinstance(value, float) and value.is_integer():
            text = str(int(value))
        return self.by_id.get(text) or self.by_text.get(text_key(text)) if text else None


_RESPONSE_PREFIXES = ("resposta_", "response_", "answer_", "output_")


def _wide_responses(columns: list[str], used: dict) -> dict[str, str]:
    """Column → condition, for a file with one response column per condition, as Causal_QA.PT publishes its
    answers (``resposta_class_agnostic``, ``resposta_class_informed`` beside ``model``): the column's name after
    the response word is the condition. A reference answer's column is none of them."""
    found = {}
    for column in columns:
        name = fold(column)
        prefix = next((prefix for prefix in _RESPONSE_PREFIXES if name.startswith(prefix)), None)
        if prefix is None or column in used.values():
            continue
        suffix = name[len(prefix) :].strip("_")
        if suffix and not set(suffix.split("_")) & REFERENCE_WORDS:
            found[column] = suffix.replace("_", "-")[:32]
    return found


def _kind_of(columns: list[str], project, overrides: dict | None = None) -> str:
    mapped = {role for role, column in (overrides or {}).items() if column in columns}
    for role, kind in (("ranking", RANKINGS), ("score", SCORES), ("response", RESPONSES)):
        if role in mapped:
            return kind
    folded = {fold(column) for column in columns}
    if folded & set(KNOWN["ranking"]) or any(_place(column) for column in columns):
        return RANKINGS
    criteria = {fold(key) for key in project.criterion_keys} | set(CRITERION_ALIASES)
    if folded & set(KNOWN["score"]) or folded & criteria:
        return SCORES
    if folded & set(KNOWN["response"]) or _wide_responses(columns, {}):
        return RESPONSES
    return ""


def _ignored(columns: list[str], used: dict, project) -> list[str]:
    """The columns of a file no role, criterion or place read: listed in the import's report."""
    criteria = {criterion["key"] for criterion in project.criteria}
    return [
        column
        for column in columns
        if column not in used.values()
        and not _place(column)
        and CRITERION_ALIASES.get(fold(column), fold(column)) not in criteria
    ]


def _place(column: str) -> int | None:
    name = fold(column)
    if name in ORDINALS:
        return ORDINALS[name]
    match = _PLACE.match(name)
    return int(match.group(1) or match.group(2)) if match else None


def _columns(columns: list[str], overrides: dict) -> dict[str, str]:
    """Role → column: the --columns given, then the first known name; a column serves one role."""
    chosen = {role: column for role, column in overrides.items() if column in columns}
    by_folded = {fold(column): column for column in reversed(columns)}
    for role, names in KNOWN.items():
        if role in chosen:
            continue
        for known in names:
            column = by_folded.get(known)
            if column is not None and column not in chosen.values():
                chosen[role] = column
                break
    return chosen


def _used(columns: list[str], overrides: dict, kind: str) -> dict[str, str]:
    """Role → column for a file of ``kind``; a file of responses without a response column gives one per
    condition as ``response:CONDITION`` (see _wide_responses)."""
    used = _columns(columns, overrides)
    if kind == RESPONSES and "response" not in used:
        wide = _wide_responses(columns, used)
        used |= {f"response:{condition}": column for column, condition in wide.items()}
    return used


def _cell(record: dict, columns: dict, role: str) -> str:
    column = columns.get(role)
    value = record.get(column) if column else None
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return str(value).strip()


def _item(name, line, record, columns, items, errors) -> int | None:
    role = "item" if "item" in columns else "question"
    if role not in columns:
        errors.append(
            ResultError(
                name,
                line,
                "item",
                "no item column (item id or question text); map one, e.g. --columns item=COLUMN",
            )
        )
        return None
    value = record.get(columns[role])
    found = items.find(value)
    if found is None:
        errors.append(
            ResultError(
                name,
                line,
                role,
                f"{str(value)[:80]!r} matches no item of the release split "
                "(by id, external id or question text)",
            )
        )
    return found


def _repetition(name, line, record, columns, errors) -> int | None:
    raw = _cell(record, columns, "repetition")
    if not raw:
        return 1
    if not raw.isdigit() or not 1 <= int(raw) <= 100:
        errors.append(ResultError(name, line, "repetition", f"{raw!r} is not a whole number from 1 to 100"))
        return None
    return int(raw)


def _read_responses(name, table, columns, items, parsed, errors, project) -> int:
    # One response column, or one per condition (``response:CONDITION`` → its column, see _wide_responses).
    wide = {
        role.partition(":")[2]: column for role, column in columns.items() if role.startswith("response:")
    }
    if "response" not in columns and not wide:
        errors.append(
            ResultError(name, 1, "response", "no response column; map one, e.g. --columns response=COLUMN")
        )
        return 0
    count = 0
    for line, record in table.rows:
        count += 1
        before = len(errors)
        release_item = _item(name, line, record, columns, items, errors)
        repetition = _repetition(name, line, record, columns, errors)
        model = _cell(record, columns, "model")[:100] or "model"
        if release_item is None or repetition is None:
            parsed.refused[name] += len(errors) > before
            continue
        answers = (
            {condition: _cell(record, {"response": column}, "response") for condition, column in wide.items()}
            if "response" not in columns
            else {_cell(record, columns, "condition")[:32] or "default": _cell(record, columns, "response")}
        )
        for condition, response in answers.items():
            parsed.put(
                parsed.responses,
                {(release_item, model, condition, repetition): response},
                name,
                line,
                f"{items.label(release_item)}: {model} · {condition} ({repetition})",
                lambda key, n: (*key[:3], key[3] + n - 1),
                RESPONSES,
            )
    return count


def _judge_label(judge: str, n: int) -> str:
    """The n-th judge of the same name, when a person keeps both of two colliding rows."""
    return f"{judge or 'judge'} ({n})"[-100:]


def _series(parsed: _Parsed) -> tuple[set, set, dict]:
    models = {key[1] for key in parsed.responses}
    conditions = {key[2] for key in parsed.responses}
    by_fold = {fold(model): model for model in models}
    return models, conditions, by_fold


def _read_scores(name, table, columns, items, parsed, errors, project) -> int:
    series = _series(parsed)
    criteria = {
        criterion["key"]: (criterion.get("min", 1), criterion.get("max", 5)) for criterion in project.criteria
    }
    wide = {}
    for column in table.columns:
        key = CRITERION_ALIASES.get(fold(column), fold(column))
        if key in criteria:
            wide[column] = key
    if not wide and "score" not in columns:
        errors.append(ResultError(name, 1, "score", "no score column; map one, e.g. --columns score=COLUMN"))
        return 0
    count = 0
    for line, record in table.rows:
        count += 1
        before = len(errors)
        stored = _read_score_row(name, line, record, columns, items, parsed, errors, criteria, wide, series)
        if not stored:
            parsed.refused[name] += len(errors) > before
    return count


def _read_score_row(name, line, record, columns, items, parsed, errors, criteria, wide, series) -> bool:
    _models, conditions, model_by_fold = series
    release_item = _item(name, line, record, columns, items, errors)
    repetition = _repetition(name, line, record, columns, errors)
    target = _target(name, line, record, columns, model_by_fold, conditions, errors)
    if release_item is None or repetition is None or target is None:
        return False
    model, condition, under = target
    if model is None:
        repetition = 1  # the reference answer is one, whatever the repetition of the row
    if model is not None and (release_item, model, condition, repetition) not in parsed.responses:
        errors.append(
            ResultError(
                name, line, "", f"no response of {model} · {condition} to this item in the responses file"
            )
        )
        return False
    given = {}
    if wide:
        for column, key in wide.items():
            given[key] = record.get(column)
    else:
        criterion = _cell(record, columns, "criterion")
        key = CRITERION_ALIASES.get(fold(criterion), fold(criterion)) if criterion else OVERALL
        if criterion and key not in criteria:
            errors.append(
                ResultError(
                    name,
                    line,
                    "criterion",
                    f"unknown criterion {criterion!r} (the project's: "
                    f"{', '.join(criteria)}, or none for one overall score)",
                )
            )
            return False
        given[key] = record.get(columns["score"])
    scores = _scores(name, line, given, criteria, errors)
    if scores is None:
        return False
    justification = _cell(record, columns, "justification")
    judge = _cell(record, columns, "judge")[:100]
    if judge:
        parsed.judges[judge] += 1
    whose = f"{model} · {condition}" if model else (f"{under} · reference" if under else "reference")
    parsed.put(
        parsed.scores,
        {
            (release_item, model, condition, repetition, under, judge, key): (value, justification)
            for key, value in scores.items()
        },
        name,
        line,
        f"{items.label(release_item)}: {whose}, {', '.join(scores)}" + (f" ({judge})" if judge else ""),
        lambda key, n: (*key[:5], _judge_label(key[5], n), key[6]),
        SCORES,
    )
    return True


def _target(name, line, record, columns, model_by_fold, conditions, errors):
    """Whose answer a score is of: (None, None, under) for the reference (``under``: the model within whose
    evaluation it was scored, or None), else (model, condition, None)."""
    raw = _cell(record, columns, "target")
    model_cell, condition_cell = _cell(record, columns, "model"), _cell(record, columns, "condition")

    def reference_under(cell: str):
        """The reference, scored within the evaluation of the model ``cell`` names (None: once for the run)."""
        if not cell or fold(cell) in REFERENCE_WORDS:
            return None, None, None
        if fold(cell) not in model_by_fold:
            errors.append(
                ResultError(
                    name,
                    line,
                    "model",
                    f"unknown model {cell!r} (the responses have: {', '.join(sorted(model_by_fold.values()))})",
                )
            )
            return None
        return None, None, model_by_fold[fold(cell)]

    if raw and fold(raw) in REFERENCE_WORDS:
        return reference_under(model_cell)
    if raw:
        parts = _SERIES.split(raw, maxsplit=1)
        if len(parts) == 2 and fold(parts[1]) in REFERENCE_WORDS:  # "gemma-3-27b · reference"
            return reference_under(parts[0])
        if len(parts) == 2:
            model_cell, condition_cell = parts
        elif model_cell and raw in conditions:  # the model in its column, the condition as whose answer
            condition_cell = raw
        else:
            model_cell = model_cell or raw
    if not model_cell and not condition_cell:
        errors.append(
            ResultError(
                name,
                line,
                "target",
                "say whose answer was scored: reference, or a model and "
                "condition (e.g. gpt-4o · class-agnostic)",
            )
        )
        return None
    if fold(model_cell) in REFERENCE_WORDS:
        return None, None, None
    model = (
        model_by_fold.get(fold(model_cell))
        if model_cell
        else (next(iter(model_by_fold.values())) if len(model_by_fold) == 1 else None)
    )
    if model is None:
        errors.append(
            ResultError(
                name,
                line,
                "model",
                f"unknown model {model_cell!r} (the responses have: "
                f"{', '.join(sorted(model_by_fold.values()))})",
            )
        )
        return None
    condition = condition_cell or (next(iter(conditions)) if len(conditions) == 1 else "")
    if condition not in conditions:
        errors.append(
            ResultError(
                name,
                line,
                "condition",
                f"unknown condition {condition_cell!r} (the responses have: {', '.join(sorted(conditions))})",
            )
        )
        return None
    return model, condition, None


def _scores(name, line, given: dict, criteria: dict, errors) -> dict | None:
    scores = {}
    for key, value in given.items():
        low, high = criteria.get(key, (1, 5))
        try:
            number = float(str(value).replace(",", "."))
        except (TypeError, ValueError):
            if value in (None, ""):
                continue
            errors.append(ResultError(name, line, key, f"{value!r} is not a number"))
            return None
        if not number.is_integer() or not low <= number <= high:
            errors.append(
                ResultError(
                    name, line, key, f"{value!r} is out of range (a whole number from {low} to {high})"
                )
            )
            return None
        scores[key] = int(number)
    if not scores:
        errors.append(ResultError(name, line, "score", "is empty"))
        return None
    return scores


def _sources(raw: str, model: str, conditions: set) -> list[str] | None:
    """Ranked or shown sources as condition names and ``reference``; None when one is unknown."""
    sources = []
    for part in (part for part in _SEPARATORS.split(raw) if part):
        if fold(part) in REFERENCE_WORDS:
            sources.append(REFERENCE)
            continue
        pieces = _SERIES.split(part, maxsplit=1)
        condition = pieces[1] if len(pieces) == 2 and fold(pieces[0]) == fold(model) else part
        if condition not in conditions:
            return None
        sources.append(condition)
    return sources


def _read_rankings(name, table, columns, items, parsed, errors, project) -> int:
    models, conditions, model_by_fold = _series(parsed)
    places = sorted(
        ((_place(column), column) for column in table.columns if _place(column)), key=lambda p: p[0]
    )
    if not places and "ranking" not in columns:
        errors.append(ResultError(name, 1, "ranking", "no ranking column (ranking, or 1st, 2nd, …)"))
        return 0
    count, previous = 0, None
    for line, record in table.rows:
        count += 1
        if errors and errors[-1].file == name and errors[-1].line == previous:
            parsed.refused[name] += 1
        previous = line
        release_item = _item(name, line, record, columns, items, errors)
        repetition = _repetition(name, line, record, columns, errors)
        model_cell = _cell(record, columns, "model")
        model = (
            model_by_fold.get(fold(model_cell))
            if model_cell
            else (next(iter(model_by_fold.values())) if len(model_by_fold) == 1 else None)
        )
        if model is None:
            errors.append(
                ResultError(
                    name,
                    line,
                    "model",
                    f"unknown model {model_cell!r} (the responses have: {', '.join(sorted(models))})",
                )
            )
            continue
        if release_item is None or repetition is None:
            continue
        raw = (
            " > ".join(
                _cell(record, {"p": column}, "p")
                for _place_number, column in places
                if _cell(record, {"p": column}, "p")
            )
            if places
            else _cell(record, columns, "ranking")
        )
        ranking = _sources(raw, model, conditions)
        shown_raw = _cell(record, columns, "shown")
        shown = _sources(shown_raw, model, conditions) if shown_raw else []
        if ranking is None or shown is None or not ranking:
            errors.append(
                ResultError(
                    name,
                    line,
                    "ranking",
                    f"{raw or shown_raw!r}: rank reference and the "
                    f"conditions of the responses ({', '.join(sorted(conditions))})",
                )
            )
            continue
        if len(set(ranking)) != len(ranking) or (shown and sorted(shown) != sorted(ranking)):
            errors.append(
                ResultError(
                    name, line, "ranking", f"{raw!r} names a source twice, or differs from the order shown"
                )
            )
            continue
        judge = _cell(record, columns, "judge")[:100]
        if judge:
            parsed.judges[judge] += 1
        parsed.put(
            parsed.rankings,
            {
                (release_item, model, repetition, judge): (
                    ranking,
                    shown,
                    _cell(record, columns, "justification"),
                )
            },
            name,
            line,
            f"{items.label(release_item)}: {model}" + (f" ({judge})" if judge else ""),
            lambda key, n: (*key[:3], _judge_label(key[3], n)),
            RANKINGS,
        )
    if count and errors and errors[-1].file == name and errors[-1].line == previous:
        parsed.refused[name] += 1
    return count


def _endpoint(project, model: str) -> ModelEndpoint:
    """The endpoint that stands for an imported model: the project's or site's of that name, else a new, inactive
    one (never called: it only names the model in the run's rows)."""
    found = (
        ModelEndpoint.objects.filter(project=project, name=model).first()
        or ModelEndpoint.objects.filter(project__isnull=True, name=model).first()
    )
    if found is not None:
        return found
    return ModelEndpoint.objects.create(
        project=project,
        name=model[:100],
        model=model[:200],
        base_url="http://imported.invalid/v1",
        api_key_env="",
        is_active=False,
    )


@transaction.atomic
def _store(project, release, split, name, parsed: _Parsed, user, enqueue: bool) -> EvalRun:
    conditions = sorted({key[2] for key in parsed.responses})
    endpoints = {model: _endpoint(project, model) for model in sorted({key[1] for key in parsed.responses})}
    judge = _endpoint(project, parsed.judges.most_common(1)[0][0]) if parsed.judges else None
    conflicts = [collision.as_dict() for collision in parsed.collisions]
    now = timezone.now()
    run = EvalRun.objects.create(
        project=project,
        release=release,
        split=split,
        answer_format=project.answer_format,
        conditions=conditions,
        judge_endpoint=judge,
        created_by=user,
        heartbeat_at=now,
        stage=EvalRun.Stage.SCORING,
        imported={
            "name": name,
            "files": parsed.files,
            "policy": parsed.policy,
            "judges": sorted({key[5] for key in parsed.scores} | {key[3] for key in parsed.rankings}),
            "conflicts": conflicts[:1000],
            "conflicts_total": len(conflicts),
            "imported_at": now.isoformat(),
            "by": user.get_username() if user else "",
        },
    )
    run.endpoints.set(endpoints.values())
    responses = []
    for (release_item, model, condition, repetition), entry in parsed.responses.items():
        text = entry.value
        response = EvalResponse(
            run=run,
            release_item_id=release_item,
            endpoint=endpoints[model],
            condition=condition,
            repetition=repetition,
            text=text,
            error="" if text else "the imported response is empty",
        )
        responses.append(response)
    _read_choices(run, responses)
    EvalResponse.objects.bulk_create(responses)
    by_key = {(r.release_item_id, r.endpoint.name, r.condition, r.repetition): r for r in responses}
    answers: dict = {}  # (release_item, model, condition, repetition, under, judge) → (scores, justifications)
    for (*answer, criterion), entry in parsed.scores.items():
        scores, justifications = answers.setdefault(tuple(answer), ({}, {}))
        scores[criterion], justification = entry.value
        if justification:
            justifications[criterion] = justification
    JudgeScore.objects.bulk_create(
        JudgeScore(
            run=run,
            release_item_id=release_item,
            response=by_key[(release_item, model, condition, repetition)] if model else None,
            under=endpoints[under] if under else None,
            judge=judge_name,
            scores=scores,
            justifications=justifications,
        )
        for (release_item, model, condition, repetition, under, judge_name), (
            scores,
            justifications,
        ) in answers.items()
    )
    Ranking.objects.bulk_create(
        Ranking(
            run=run,
            release_item_id=release_item,
            endpoint=endpoints[model],
            repetition=repetition,
            judge=judge_name,
            shown=entry.value[1],
            ranking=entry.value[0],
            justification=entry.value[2],
        )
        for (release_item, model, repetition, judge_name), entry in parsed.rankings.items()
    )
    if enqueue:
        from .services import run_enqueue

        transaction.on_commit(lambda: run_enqueue(run.pk), robust=True)
    return run


def _store_published(
    project, release, split, name, files, published: dict, user, enqueue, conflicts: str, items: _Items
) -> EvalRun:
    """The responses a design's reader found in its own result files, held, counted and reported per file as the
    common path holds its rows: a row that repeats an answer is stored once, one that says otherwise is a
    conflict settled by ``conflicts`` (else listed, and nothing is imported)."""
    errors = [ResultError(*error) for error in published["errors"]]
    parsed = _Parsed(policy=conflicts)
    for file, line, key, text in published["responses"]:
        release_item, model, condition, repetition = key
        parsed.put(
            parsed.responses,
            {key: text},
            file,
            line,
            f"{items.label(release_item)}: {model} · {condition} ({repetition})",
            lambda key, n: (*key[:3], key[3] + n - 1),
            RESPONSES,
        )
    if not parsed.responses and not errors:
        errors.append(ResultError("files", 0, "", "no responses: give a file of model responses"))
    conflicting = [] if conflicts else [c for c in parsed.collisions if not c.duplicate]
    errors += [ResultError(c.file, c.line, "", c.reason) for c in conflicting]
    if errors:
        raise ResultsRejected(sorted(errors, key=lambda e: (e.file, e.line)), conflicts=conflicting)
    parsed.refused.update({file: count for file, count in published.get("refused", {}).items() if count})
    parsed.files = [
        {
            "name": f.name,
            "kind": RESPONSES,
            "sha256": f.sha256,
            "rows": published["rows"].get(f.name, 0),
            "columns": published.get("columns", {}).get(f.name, {}),
            "ignored": published.get("ignored", {}).get(f.name, []),
        }
        for f in published.get("files", files)  # a zip given stands for the files it holds
    ]
    _count(parsed, errors)
    return _store(project, release, split, name, parsed, user, enqueue)


def _read_choices(run: EvalRun, responses: list[EvalResponse]) -> None:
    """Closed formats: the letter or yes / no read from each response, and whether it is right, by the rule a
    live run grades its answers with (``grading``): what the design asked of the item, not its own letter."""
    if run.answer_format == OPEN:
        return
    records = dict(
        ReleaseItem.objects.filter(pk__in={r.release_item_id for r in responses}).values_list("pk", "data")
    )
    design = design_for(run.project)
    for response in responses:
        if response.error:
            continue
        response_grade(
            response, records[response.release_item_id], design, run.project.language, run.answer_format
        )
