"""The kinds of model call, the kinds of generation job and the page forms that start them: registries that
generation, evaluation and the designs fill.

A ``CallKind`` is every kind of model call the runner makes: what its prompt templates may use (``variables``)
and must declare (``output_keys``), the template variant it uses unless told otherwise, and the ``work`` class
that plans its calls and applies their outputs. Evaluation registers its own (benchmark answers, judges), which
no door offers as a job; a ``JobKind`` is a call kind people start, and registering one registers its call kind.

A ``JobKind`` is all a door needs to start a job of that kind: ``job_create`` checks the request with the
kind's ``params`` (and ``runs_on``), the runner plans and applies its calls with its ``work`` class, the
``generate`` command offers it under ``command``, and the API takes its key. A ``JobPage`` is a card of the
generation page: its form, its template, and how the form's data become ``job_create``'s arguments.

    job_kind_register(JobKind(key="decontamination", label=_("METER: de-contamination"), work=..., params=...))

Nothing here names a design; generation registers its own kinds when its app is ready, each design when its
app is. A kind's prompt templates may use the placeholders ``variables`` lists.
"""

from collections.abc import Callable
from dataclasses import dataclass, field


def _item_count(params: dict) -> int:
    return len(params.get("item_ids", []))


def _anywhere(project) -> str | None:
    return None


def _no_variant(options: dict) -> str | None:
    return None


@dataclass(frozen=True)
class CallKind:
    key: str
    label: str
    work: type | None = None  # a generation.services.work.Work subclass; None: templates only (``other``)
    variables: frozenset = field(default_factory=frozenset)  # placeholders its templates may use; empty: any
    output_keys: tuple[
        str, ...
    ] = ()  # the keys of the model's output it reads: its templates must declare them
    options: type | None = (
        None  # a generation.options.JobOptions: the kind's own options, offered at every door
    )
    default_template: str = "default"  # the variant a call uses unless told otherwise


@dataclass(frozen=True)
class JobKind:
    key: str
    label: str
    work: type  # a generation.services.work.Work subclass: plans the calls, applies their outputs
    # (project, errors, options) -> the job's params; what is wrong goes into ``errors`` by field. ``options``
    # holds the shared arguments (count, causal_class, topic, batch_size, item_ids, endpoint, answer_*...) and
    # the kind's own (``options``), each absent one None or its default.
    params: Callable[..., dict]
    runs_on: Callable = _anywhere  # (project) -> None, or why the project may not run this kind
    planned_calls: Callable[[dict], int] = _item_count  # the calls a job with these params will make
    template_name: Callable[[dict], str | None] = _no_variant  # the template variant the options choose
    default_template: str = "default"  # the variant a job uses unless told otherwise
    variables: frozenset = field(default_factory=frozenset)  # placeholders its templates may use
    answered: bool = False  # a second endpoint may answer, in the same job, what this kind writes
    command: str = ""  # its name in ``manage.py generate`` (default: the key with dashes)
    output_keys: tuple[
        str, ...
    ] = ()  # the keys of the model's output it reads: its templates must declare them
    options: type | None = (
        None  # a generation.options.JobOptions: the kind's own options, offered at every door
    )

    @property
    def command_name(self) -> str:
        return self.command or self.key.replace("_", "-")


def _first_kind(page):
    return lambda project, data: {"kind": page.kinds[0]}


@dataclass(frozen=True)
class JobPage:
    key: str  # the form's prefix and the address it posts to (jobs/new/<key>/)
    kinds: tuple[str, ...]  # the kinds it may start; the page is offered where the first of them runs
    # A generation.forms.JobForm subclass with the card's own fields; None: JobForm. Either way the form also
    # asks every option of the kinds (``JobKind.options``) it does not ask itself.
    form: type | None = None
    template: str = "generation/jobs/_kind.html"  # the card (context: project, form, page, card, kind)
    # (project, cleaned_data) -> job_create's arguments, ``kind`` among them (the options are added to them);
    # None: the first kind, with its options.
    arguments: Callable[..., dict] | None = None
    context: Callable = lambda project: {}  # (project) -> what the card shows; None hides the card

    def __post_init__(self):
        if self.arguments is None:
            object.__setattr__(self, "arguments", _first_kind(self))


_CALL_KINDS: dict[str, CallKind] = {}
_KINDS: dict[str, JobKind] = {}
_PAGES: dict[str, JobPage] = {}


def call_kind_register(kind: CallKind) -> CallKind:
    _CALL_KINDS[kind.key] = kind
    return kind


def call_kinds() -> list[CallKind]:
    return list(_CALL_KINDS.values())


def call_kind(key: str) -> CallKind | None:
    return _CALL_KINDS.get(key)


def job_kind_register(kind: JobKind) -> JobKind:
    _KINDS[kind.key] = kind
    call_kind_register(
        CallKind(
            key=kind.key,
            label=kind.label,
            work=kind.work,
            variables=kind.variables,
            output_keys=kind.output_keys,
            default_template=kind.default_template,
        )
    )
    return kind


def job_kinds() -> list[JobKind]:
    return list(_KINDS.values())


def job_kind(key: str) -> JobKind | None:
    return _KINDS.get(key)


def job_kind_label(key: str) -> str:
    """The kind's label, for any kind a job or a template may have (evaluation's too)."""
    registered = _CALL_KINDS.get(key)
    return str(registered.label) if registered is not None else key


def job_page_register(page: JobPage) -> JobPage:
    _PAGES[page.key] = page
    return page


def job_pages(project) -> list[JobPage]:
    """The cards of the generation page the project may use, in the order they were registered."""
    return [page for page in _PAGES.values() if _KINDS[page.kinds[0]].runs_on(project) is None]
