"""The ``ProjectDesign`` interface and its registry (see ``annotation.designs``)."""

from collections.abc import Iterator
from dataclasses import dataclass, field

from django.apps import apps
from django.db.models import Count, Q
from django.db.models.fields.json import KeyTextTransform

_REGISTRY: dict[str, "ProjectDesign"] = {}


@dataclass(frozen=True)
class Stage:
    """One step of a design's pipeline, as shown on the project page and the help page."""

    key: str
    label: str
    description: str = ""


@dataclass
class ExportFile:
    """A design-specific file of a release export: a path inside the archive and its rows (dicts)."""

    path: str
    rows: Iterator[dict]
    fields: list[str] = field(default_factory=list)


class ProjectDesign:
    """Defaults and hooks of one benchmark design. Subclasses override what differs."""

    key = ""
    name = ""
    paper = ""  # file in ../shared/papers/ it follows
    summary = ""  # one line for the creation form
    answer_format = "open"  # a Project.AnswerFormat value
    default_language = "pt-BR"  # of a new project's items when its creator names none
    example_file = ""  # file under the design's data/ folder, loaded with the demo
    # Files under the design's data/ folder in its authors' published layouts (invented content, real shapes),
    # imported into the demo project through the common import, as a person's upload of them would be.
    published_examples: tuple[str, ...] = ()
    help_template = ""  # template of the design's section on the help page
    item_partial = ""  # template included in the annotator's and curator's item pages (context: item, design)
    project_partial = ""  # template included in the project page (context: project, design, design_context)
    nav_partial = (
        ""  # links of the design's own pages, included in the project's navigation (context: project)
    )
    # A blind step of this design compares answers (CausalBench's second answer against the first): any model
    # call of its projects may carry them (in its prompt or its output), so call pages are for curators only.
    answers_checked_blind = False
    # The optional parts of the benchmark-run form this design's runs use (evaluation.forms.RUN_FIELD_GROUPS):
    # "judge" (an LLM judge of open answers), "bertscore", "levels" (level and question-type metadata keys),
    # "cells" (task and variant keys, differences between cells). The run form shows only these.
    run_field_groups: tuple[str, ...] = ("judge", "bertscore", "levels", "cells")

    def stages(self) -> list[Stage]:
        return []

    def project_defaults(self) -> dict:
        """Field values of a new project of this design (answer_format, label_set, criteria, overlap, design_settings)."""
        return {"answer_format": self.answer_format}

    def demo_example(self, project, users: dict) -> dict:
        """The example as the demo loads it (``manage.py load_demo``): by default ``load_example``; a design whose
        example leaves no work for some role (everything judged, decided or waiting for a model) shapes it here
        so that annotators and curators each find something to do."""
        return self.load_example(project, users)

    def load_example(self, project, users: dict) -> dict:
        """Load the design's example dataset into ``project``; returns counts of what was created."""
        return {}

    def published_import(self, *, project, data: bytes, filename: str) -> str | None:
        """Import the design's dataset in the layout it is published in; returns what was added, in words.
        None: the design's items come in through the common import (``annotation.importing``). Raises
        ValueError naming the row at fault (nothing is then imported)."""
        return None

    def published_results(self, *, records: dict, files: list) -> dict | None:
        """Answers read from the design's own published result files, for a results import into a run of a
        release: {"responses": {(release_item, model, condition, repetition): answer text}, "errors": [(file,
        line, field, reason)], "rows": {file name: rows read}}; ``records`` are the release split's records by
        release item. None: the files are read as any results are. The answers are graded as a live run's."""
        return None

    def published_example_paths(self) -> list:
        """The paths of ``published_examples``, in the design's package's data/ folder, in import order."""
        import sys
        from pathlib import Path

        folder = Path(sys.modules[type(self).__module__].__file__).resolve().parent / "data"
        return [folder / name for name in self.published_examples]

    def published_read(self, *, project, data: bytes, filename: str, batch=None):
        """Import the design's dataset in the layout its authors publish it in, as the common import's source
        (``annotation.importing.service``): a ``PublishedReport`` of what went in; None: the file is not in
        that layout. Raises ``PublishedRowsRefused`` or ValueError naming the rows at fault (nothing is then
        imported). By default, ``published_import``'s words.

        ``batch``: the common import's, claimed for writing. A reader that writes in several transactions
        (``annotation.importing.service.chunks_commit``) marks its groups and items with it: no door shows them
        before the import finishes, and they are removed if it stops."""
        from annotation.importing.published import PublishedReport

        added = self.published_import(project=project, data=data, filename=filename)
        return None if added is None else PublishedReport(headline=added)

    def reads_published(self) -> bool:
        """Whether the design has a reader of its authors' published files."""
        return (
            type(self).published_import is not ProjectDesign.published_import
            or type(self).published_read is not ProjectDesign.published_read
        )

    def item_warnings(self, item) -> list[str]:
        """Invariant checks of one item, shown to the annotator as warnings (empty: all hold)."""
        return []

    def agreement_fields(self) -> list[str]:
        """Item metadata fields the agreement page breaks down by (METER: stage; CausalityCheck: cell)."""
        return []

    def benchmark_question(self, record: dict, language: str) -> dict | None:
        """How a benchmark run asks a released item when the design asks it as a question of its own
        (CausalityCheck's tasks): {"question", "options": [{"letter", "text"}], "correct": {letters}}, graded
        on those options, chance one over their number. None: the item's own question and options."""
        return None

    def unit_order(self) -> dict[str, list[str]]:
        """The order of the tasks and variants in a run's table of scores as means of units ({"task": [...],
        "variant": [...]}, CausalityCheck: its Table 1's); values not named come after, by name."""
        return {}

    def group_size(self) -> int | None:
        """How many questions make a whole item group (CausalBench: four perspectives); group accuracy counts
        only whole groups. None: the most questions any group of the run has."""
        return None

    def rating_level(self, project) -> str:
        """The level of measurement of the rating criteria, where the agreement page and API open: a project's
        ``design_settings["rating_level"]`` when set, else ordinal (a Likert scale's points are ordered, not
        evenly spaced)."""
        return (project.design_settings or {}).get("rating_level") or "ordinal"

    def export_files(self, release) -> list[ExportFile]:
        """Files with the design's own field names, written into the release archive beside the common format.

        A path ending in ``.jsonl`` is written as JSON lines; one ending in ``.csv`` as CSV with ``fields``
        as its header. The archive's ``checksums.txt`` covers these files too.
        """
        return []

    def judgment_criteria(self, item) -> list[dict]:
        """The rating criteria an annotator fills in for ``item`` (METER: none to verify a pair, five pass/fail
        criteria to filter a question). Default: the project's criteria."""
        return list(item.project.criteria)

    def judgment_asks_vote(self, item) -> bool:
        """Whether the annotator votes accept / reject / needs revision on ``item`` (ExpliCa: no, only a rating)."""
        return True

    def item_shows_context(self, item) -> bool:
        """Whether the item page prints the item's context itself (False: the design's partial shows it, as
        CausalBench renders its scenario with code and formulas, once)."""
        return True

    def annotators_edit(self, item) -> bool:
        """Whether annotators may edit ``item`` (ExpliCa: no, every rater must read the same sentence)."""
        return True

    def judgment_labels(self, item) -> list[str]:
        """The class labels offered for ``item``; empty means the judgment asks for no label."""
        return list(item.project.label_set)

    def judged_fields(self, item) -> set[str]:
        """What of ``item`` states the answer its judgment asks for: ``causal_class``, ``metadata.<key>``,
        ``options.role``. An annotator does not see it before judging the item (it would anchor the very label
        whose agreement is measured); afterwards they do, and curators always do. A project shows it anyway with
        ``design_settings["show_judged_fields"]``. Default: the class, when the judgment asks for a label."""
        return {"causal_class"} if self.judgment_labels(item) else set()

    def quality_questions(self, project) -> list[dict]:
        """The categorical questions the annotator models aggregate (evaluation.quality): ``{"key", "source"}``
        with ``source`` "vote", "causal_class", or "rating" (and ``criterion``, its key). By default the vote,
        the causal class and every yes/no rating (two levels); a design adds its own (ExpliCa: its rating)."""
        questions = [{"key": "vote", "source": "vote"}, {"key": "causal_class", "source": "causal_class"}]
        for criterion in self.judgment_criteria_of_project(project):
            if int(criterion.get("max", 5)) - int(criterion.get("min", 1)) == 1:
                questions.append(
                    {"key": f"rating:{criterion['key']}", "source": "rating", "criterion": criterion["key"]}
                )
        return questions

    def quality_question_applies(self, question: dict, metadata: dict) -> bool:
        """Whether ``question`` is asked of an item with ``metadata`` (CausalityCheck: each task's class question
        only of that task's items, each with its own labels). Default: every question of every item."""
        return True

    def judgment_criteria_of_project(self, project) -> list[dict]:
        """The rating criteria the project's judgments may hold (every item's, at the project level)."""
        return list(project.criteria)

    def label_names(self) -> dict:
        """Names, in the reader's language, of this design's own labels (perspectives, verdicts), by label."""
        return {}

    def hidden_from_annotators(self, item) -> set[str]:
        """What of ``item`` annotators may not read now (curators and owners read everything): ``reference_answer``
        and ``metadata.<key>`` names. Pages, partials and the API leave them out. CausalBench hides the first
        answer until the blind second answer is in."""
        return set()

    def review_held_back(self) -> Q | None:
        """Which items in review the review queue may not hand out yet (a condition on Item; None: none).
        Fixed per design, so the queue compiles it into its queries once. CausalBench holds back its
        questions until their blind answer check is in: the check queue hands those out, blind."""
        return None

    def held_back_work(self) -> Q | None:
        """Which of the held-back items a queue of the design's own hands to annotators (a condition on Item;
        None: none), so the home page counts them as waiting work. CausalBench: the questions its check queue
        hands out."""
        return None

    def round_complete(self, item) -> None:
        """Called in the transaction that records the last judgment of ``item``'s round (``project.overlap``
        judgments): a design that decides by votes (METER's verification and filtering) acts here."""

    def releasable(self, items):
        """The approved items a release may hold (a queryset in, a queryset out): METER releases an entry only
        when all three of its questions are approved."""
        return items

    def stage_counts(self, project) -> dict[str, int]:
        """How many of the project's items are at each stage (``stages()`` keys), for the project page.

        By default items record their stage in ``item.metadata["stage"]``; a design whose early stages
        have no items yet (a METER entry is a cause–effect pair before it has questions) overrides this.
        """
        if not self.stages():
            return {}
        rows = (
            project.items.annotate(stage=KeyTextTransform("stage", "metadata"))
            .exclude(stage=None)
            .values_list("stage")
            .annotate(n=Count("id"))
        )
        return {stage: n for stage, n in rows}

    def project_context(self, project) -> dict:
        """What ``project_partial`` shows on the project page (reports: METER's letter balance, yes/no balance…)."""
        return {}

    def demo_project(self) -> dict:
        """Name, slug and description of the design's demo project (``manage.py load_demo``)."""
        return {
            "name": f"{self.name} demo",
            "slug": f"{self.key.replace('_', '-')}-demo",
            "description": self.summary,
        }


def unseen_before_judging(*, project, item, user, judged: bool) -> set[str]:
    """The judged fields of ``item`` (``ProjectDesign.judged_fields``) that ``user`` may not see now: none for a
    curator or owner, none once ``judged`` (the person has judged the item), none where the project shows them
    (``design_settings["show_judged_fields"]``)."""
    from ..permissions import Role, has_role

    if judged or (project.design_settings or {}).get("show_judged_fields"):
        return set()
    if has_role(user, project, Role.CURATOR):
        return set()
    item.project = project
    return set(design_for(project).judged_fields(item))


def design_item_context(project, item) -> dict:
    """What the annotator's and the curator's item pages add for the project's design: its partial and warnings."""
    design = design_for(project)
    item.project = project  # already loaded by the page: the hooks read it without a query
    return {
        "design": design,
        "design_warnings": design.item_warnings(item),
        "design_shows_context": design.item_shows_context(item),
    }


def register(cls: type[ProjectDesign]) -> type[ProjectDesign]:
    _REGISTRY[cls.key] = cls()
    return cls


def designs() -> list[ProjectDesign]:
    """The registered designs in the order of their apps in ``INSTALLED_APPS`` (the creation form's order),
    whatever order their modules happened to be imported in; a design outside an app comes last."""
    order = {config.name: position for position, config in enumerate(apps.get_app_configs())}

    def position(design: ProjectDesign) -> int:
        config = apps.get_containing_app_config(type(design).__module__)
        return order.get(config.name, len(order)) if config else len(order)

    return sorted(_REGISTRY.values(), key=position)


def design_for(project_or_key) -> ProjectDesign:
    key = getattr(project_or_key, "design", project_or_key)
    try:
        return _REGISTRY[key]
    except KeyError:
        raise LookupError(f"unknown project design {key!r}; known: {', '.join(_REGISTRY)}") from None
