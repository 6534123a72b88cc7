"""The ExpliCa design (`../shared/papers/explica.json`): sentence pairs rated by many people.

A *pair* (an ``ItemGroup`` of kind "pair") holds two event sentences, A and B. Its eight items
are generated, never written by hand: each connective of the project's table (``then``,
``after``, ``so``, ``because`` by default) joins the two sentences in both orders (A–B and
B–A). The table lives in ``project.design_settings["connectives"]``, so a project may edit a
connective's wording, type (causal / temporal) or order (iconic / anti-iconic) as data.

Each item is rated 1–10 for acceptability by ``project.overlap`` raters (15 by default; the
queue hands an item to exactly that many). ``designs.explica.aggregation`` then
labels every pair and direction by the connective with the highest mean rating.
"""

import json
from pathlib import Path

from django.db import transaction
from django.utils.translation import gettext_lazy as _

from annotation.designs.base import ExportFile, ProjectDesign, Stage, register
from annotation.models import ImportBatch, Item, ItemGroup, Project
from annotation.services import NewItem, items_create

DATA = Path(__file__).resolve().parent / "data"  # the example dataset

CONNECTIVE_TYPES = ("causal", "temporal")
CONNECTIVE_ORDERS = ("iconic", "anti-iconic")
ITEM_ORDERS = ("ab", "ba")  # A first, or B first
RATING = "acceptability"
LABELS = ["causal", "temporal", "unrelated"]
DEFAULT_RULE = {"best_mean_above": 6, "overall_mean_below": 5}
DEFAULT_RATERS = 15
DEFAULT_CONNECTIVES = [
    {
        "word": "then",
        "type": "temporal",
        "order": "iconic",
        "templates": {"pt-BR": "{first}, então {second}.", "en": "{first}, then {second}."},
    },
    {
        "word": "after",
        "type": "temporal",
        "order": "anti-iconic",
        "templates": {"pt-BR": "{first} depois que {second}.", "en": "{first} after {second}."},
    },
    {
        "word": "so",
        "type": "causal",
        "order": "iconic",
        "templates": {"pt-BR": "{first}, por isso {second}.", "en": "{first}, so {second}."},
    },
    {
        "word": "because",
        "type": "causal",
        "order": "anti-iconic",
        "templates": {"pt-BR": "{first} porque {second}.", "en": "{first} because {second}."},
    },
]
# A sentence that becomes the second clause starts in lower case when its first word is one of these
# (an article, a pronoun); anything else (a name: "Tiago", "Rafael") keeps its capital.
LOWERCASE_OPENERS = {
    "o",
    "a",
    "os",
    "as",
    "um",
    "uma",
    "uns",
    "umas",
    "ele",
    "ela",
    "eles",
    "elas",
    "este",
    "esta",
    "esse",
    "essa",
    "isso",
    "isto",
    "aquele",
    "aquela",
    "meu",
    "minha",
    "seu",
    "sua",
    "nosso",
    "nossa",
    "no",
    "na",
    "the",
    "an",
    "he",
    "she",
    "it",
    "they",
    "we",
    "this",
    "that",
    "these",
    "those",
    "his",
    "her",
    "their",
    "our",
    "my",
    "there",
    "some",
}


class DesignSettingsError(ValueError):
    """The project's design settings cannot be used; the message names the setting and the problem."""


def connectives_of(project: Project) -> list[dict]:
    """The project's connective table, checked: word, type, order and a template for the project's language."""
    table = (project.design_settings or {}).get("connectives") or DEFAULT_CONNECTIVES
    if not isinstance(table, list) or not table:
        raise DesignSettingsError("design_settings.connectives must be a non-empty list")
    seen = set()
    checked = []
    for number, entry in enumerate(table, start=1):
        where = f"design_settings.connectives[{number}]"
        if not isinstance(entry, dict):
            raise DesignSettingsError(f"{where} must be an object with word, type, order and templates")
        word = str(entry.get("word") or "").strip()
        if not word or word in seen:
            raise DesignSettingsError(f"{where}: the word is missing or repeated ({word!r})")
        seen.add(word)
        if entry.get("type") not in CONNECTIVE_TYPES:
            raise DesignSettingsError(f"{where} ({word}): type must be one of {', '.join(CONNECTIVE_TYPES)}")
        if entry.get("order") not in CONNECTIVE_ORDERS:
            raise DesignSettingsError(
                f"{where} ({word}): order must be one of {', '.join(CONNECTIVE_ORDERS)}"
            )
        template = template_for(entry.get("templates") or {}, project.language)
        if template is None or "{first}" not in template or "{second}" not in template:
            raise DesignSettingsError(
                f"{where} ({word}): needs a template for {project.language} (or en) with {{first}} and {{second}}"
            )
        checked.append({"word": word, "type": entry["type"], "order": entry["order"], "template": template})
    return checked


def template_for(templates: dict, language: str) -> str | None:
    for candidate in (language, language.split("-")[0], "en"):
        if templates.get(candidate):
            return str(templates[candidate])
    return None


def unrelated_rule(project: Project) -> dict:
    """The thresholds of the "unrelated" label: best mean not above ``best_mean_above`` and overall mean below
    ``overall_mean_below``."""
    rule = {**DEFAULT_RULE, **((project.design_settings or {}).get("unrelated_rule") or {})}
    for key in DEFAULT_RULE:
        if isinstance(rule[key], bool) or not isinstance(rule[key], int | float):
            raise DesignSettingsError(f"design_settings.unrelated_rule.{key} must be a number")
    return {key: rule[key] for key in DEFAULT_RULE}


def clause(sentence: str, *, second: bool) -> str:
    """A sentence as a clause of the joined item: no final full stop; lower-cased opener when it comes second."""
    text = " ".join(sentence.split()).rstrip(" .")
    if second and text:
        first_word = text.split(" ", 1)[0]
        if first_word.lower() in LOWERCASE_OPENERS:
            text = first_word.lower() + text[len(first_word) :]
    return text


def item_text(connective: dict, first: str, second: str) -> str:
    # replace, not str.format: a sentence with braces in it must come out as written
    return (
        connective["template"]
        .replace("{first}", clause(first, second=False))
        .replace("{second}", clause(second, second=True))
    )


def direction_of(item_order: str, connective_order: str) -> str:
    """Which sentence is the cause (or the earlier event) when this connective in this order is the right one."""
    a_first = item_order == "ab"
    iconic = connective_order == "iconic"
    return "a_to_b" if a_first == iconic else "b_to_a"


@transaction.atomic
def explica_pair_add(
    *,
    project: Project,
    sentence_a: str,
    sentence_b: str,
    external_id: str = "",
    metadata: dict | None = None,
    item_metadata: dict | None = None,
    import_batch: ImportBatch | None = None,
) -> ItemGroup:
    """A sentence pair and its generated items (every connective × both orders), ready to be rated.
    ``item_metadata``: kept in each item's metadata too (a published file's columns, so a release carries them).
    ``import_batch``: the import writing the pair, which no door shows before that import finishes."""
    sentence_a, sentence_b = (sentence_a or "").strip(), (sentence_b or "").strip()
    if not sentence_a or not sentence_b:
        raise ValueError(f"pair {external_id or '(new)'}: both sentence_a and sentence_b are needed")
    connectives = connectives_of(project)
    group = ItemGroup.objects.create(
        project=project,
        kind="pair",
        external_id=external_id,
        metadata={**(metadata or {}), "sentence_a": sentence_a, "sentence_b": sentence_b},
        import_batch=import_batch,
    )
    items = []
    for connective in connectives:
        for item_order in ITEM_ORDERS:
            first, second = (sentence_a, sentence_b) if item_order == "ab" else (sentence_b, sentence_a)
            text = item_text(connective, first, second)
            items.append(
                NewItem(
                    group_id=group.pk,
                    position_in_group=len(items),
                    question=text,
                    review=True,
                    causal_class=connective["type"],
                    origin=Item.Origin.GENERATED,
                    source="explica:connectives",
                    external_id=f"{external_id}-{connective['word']}-{item_order}" if external_id else "",
                    metadata={
                        "stage": "rating",
                        "connective": connective["word"],
                        "type": connective["type"],
                        "order": connective["order"],
                        "item_order": item_order,
                        "direction": direction_of(item_order, connective["order"]),
                        "sentences": [sentence_a, sentence_b],
                        **(item_metadata or {}),
                    },
                )
            )
    items_create(project=project, items=items, import_batch_id=import_batch.pk if import_batch else None)
    return group


def read_example(path=DATA / "explica.json") -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def example_pairs_load(project: Project, data: dict) -> list[ItemGroup]:
    """The example's pairs with their generated items (no ratings yet)."""
    return [
        explica_pair_add(
            project=project,
            sentence_a=pair["sentence_a"],
            sentence_b=pair["sentence_b"],
            external_id=pair["external_id"],
            metadata={"expected": pair.get("expected"), "expected_direction": pair.get("expected_direction")},
        )
        for pair in data["pairs"]
    ]


@register
class ExplicaDesign(ProjectDesign):
    key = "explica"
    name = "ExpliCa"
    paper = "explica.json"
    summary = _(
        "Pairs of event sentences joined by causal and temporal connectives, each item rated 1–10 by many "
        "people; the best-rated connective gives the pair's relation."
    )
    answer_format = "rating"
    default_language = "en"  # the published pairs are English (and Italian): no Portuguese connective in them
    run_field_groups = ()
    example_file = "explica.json"
    published_examples = ("explica.csv",)
    help_template = "designs/explica/explica_help.html"
    item_partial = "designs/explica/_explica_item.html"
    nav_partial = "designs/explica/_nav.html"
    project_partial = "designs/explica/_explica_project.html"  # pairs labelled, ties, labels

    def published_import(self, *, project, data, filename):
        from .published import published_pairs_import

        return f"{len(published_pairs_import(project=project, data=data, filename=filename))} pairs added"

    def published_read(self, *, project, data, filename, batch=None):
        from annotation.importing.published import PublishedReport

        from .published import published_pairs_import

        groups = published_pairs_import(project=project, data=data, filename=filename, batch=batch)
        kept = {name for group in groups for name in (group.metadata.get("published") or {})}
        rows = sum(len(group.metadata.get("published_rows") or []) for group in groups)
        # Counted before the import's batch is done writing: its items are not yet the project's.
        items = Item.with_unsettled.filter(group_id__in_many=[group.pk for group in groups]).count()
        return PublishedReport(
            records=rows,
            groups=len(groups),
            items=items,
            kept=kept,
            group_word="pairs",
            headline=f"{len(groups)} pairs added",
        )

    def stages(self):
        return [
            Stage("pairs", _("Sentence pairs"), _("Two event sentences, A and B, per pair.")),
            Stage(
                "rating", _("Rating"), _("Every connective in both orders, rated 1–10 by each of the raters.")
            ),
            Stage(
                "aggregation",
                _("Aggregation"),
                _(
                    "Per pair and order, the connective with the highest mean rating gives the relation's type and "
                    "order; low ratings overall mean unrelated; ties go to a curator."
                ),
            ),
        ]

    def project_defaults(self):
        return {
            "answer_format": self.answer_format,
            "label_set": list(LABELS),
            "criteria": [{"key": RATING, "label": "Acceptability of the connective", "min": 1, "max": 10}],
            "overlap": DEFAULT_RATERS,
            "design_settings": {
                "connectives": [dict(entry) for entry in DEFAULT_CONNECTIVES],
                "unrelated_rule": dict(DEFAULT_RULE),
                "rating_level": "interval",
            },
        }

    def load_example(self, project, users, demo: bool = False):
        """The example's pairs and items, the example's 15 ratings per item, and the aggregated gold labels.

        ``demo`` (the demo's roles): the last pair keeps no ratings, so its items wait for the project's raters
        (the demo's annotators among them), and the one before gets its ratings after the aggregation, so its
        complete rounds wait for a curator to aggregate them."""
        from .aggregation import example_ratings_load, explica_aggregate

        data = read_example()
        groups = example_pairs_load(project, data)
        pair_ids = list(dict.fromkeys(row["pair_id"] for row in data["ratings"]))
        unrated, later = (pair_ids[-1], pair_ids[-2]) if demo and len(pair_ids) > 2 else (None, None)

        def ratings_of(keep):
            return {**data, "ratings": [row for row in data["ratings"] if keep(row["pair_id"])]}

        raters = example_ratings_load(project, ratings_of(lambda pair: pair not in (unrated, later)))
        curator = users.get("curator") if users else None
        report = explica_aggregate(project=project, curator=curator)
        if later is not None:
            example_ratings_load(project, ratings_of(lambda pair: pair == later))
        return {
            "pairs": len(groups),
            "items": 8 * len(groups),
            "raters": len(raters),
            "judgments": 8 * len(groups) * len(raters),
            "labelled": len(report.labelled),
            "ties": len(report.ties),
        }

    def demo_example(self, project, users):
        return self.load_example(project, users, demo=True)

    def agreement_fields(self):
        return ["connective", "item_order"]

    def rating_level(self, project):
        """Interval: ExpliCa's 1–10 ratings are averaged per connective, which treats their steps as equal."""
        return (project.design_settings or {}).get("rating_level") or "interval"

    def judgment_labels(self, item):
        """Raters give a rating only: the relation comes from the aggregation, not from a label."""
        return []

    def judgment_criteria(self, item):
        """The project's 1–10 acceptability rating, keys 1–9 and 0 for 10."""
        return [
            {**criterion, "keys": {"10": "0"}} if int(criterion.get("max", 5)) == 10 else criterion
            for criterion in item.project.criteria
        ]

    def quality_questions(self, project):
        """The acceptability rating, its levels taken as categories: the annotator models find raters who
        answer at random or against the others (the ordering of the levels is left to the aggregation rules)."""
        return [
            {"key": f"rating:{criterion['key']}", "source": "rating", "criterion": criterion["key"]}
            for criterion in project.criteria
        ]

    def judgment_asks_vote(self, item):
        """Raters give a rating only: an item is not accepted or rejected by one of its fifteen raters."""
        return False

    def annotators_edit(self, item):
        """Every rater must read the same sentence: annotators never edit it (curators still may)."""
        return False

    def demo_project(self):
        # The example's pairs are Portuguese sentences: its connectives must be the Portuguese ones.
        return {**super().demo_project(), "language": "pt-BR"}

    def project_context(self, project):
        from .aggregation import explica_summary

        return {"explica": explica_summary(project)}

    def export_files(self, release):
        from .aggregation import export_item_rows, export_pair_rows, export_published_rows

        files = [
            ExportFile("explica/explica_pairs.csv", export_pair_rows(release), PAIR_FIELDS),
            ExportFile("explica/explica_items.csv", export_item_rows(release), ITEM_FIELDS),
        ]
        published_fields, published_rows = export_published_rows(release)
        if published_rows:  # the pairs' published rows, as the file that brought them: it imports unchanged
            files.insert(0, ExportFile("explica/explica.csv", iter(published_rows), published_fields))
        return files


# ExpliCa's own column names (github.com/martinadh/ExpliCa): one row per pair and order, and one per item
# (the "4800 version"); the last columns are the platform's additions (rule, ties, counts).
PAIR_FIELDS = [
    "pair_id",
    "Sentence_A",
    "Sentence_B",
    "rating_iconic_causal",
    "rating_anticonic_causal",
    "rating_iconic_temporal",
    "rating_anticonic_temporal",
    "human_preferred_connective",
    "human_preferred_connective_desc",
    "human_preferred_connective_unrel",
    "order",
    "tied_connectives",
    "n_ratings",
    "rule",
]
ITEM_FIELDS = [
    "pair_id",
    "Sentence_A",
    "Sentence_B",
    "item",
    "tested_connective",
    "tested_relation",
    "tested_order",
    "mean_rating",
    "n_ratings",
    "relation_human",
    "order_human",
    "condition_human",
    "human_preferred_connective",
    "human_preferred_connective_unrel",
]


def explica_settings_update(*, project: Project, connectives: list, rule: dict) -> Project:
    """Replace the project's connective table and unrelated rule, after checking both (new pairs use them;
    items already generated keep their wording)."""
    candidate = Project(
        language=project.language,
        design_settings={
            **(project.design_settings or {}),
            "connectives": connectives,
            "unrelated_rule": rule,
        },
    )
    connectives_of(candidate)
    unrelated_rule(candidate)
    project.design_settings = candidate.design_settings
    project.save(update_fields=["design_settings"])
    return project
