"""The dataset card of a release: Markdown with a YAML header in the Hugging Face dataset-card format.

The card is rendered from ``release.counts`` (the figures frozen when the release was cut), so the
same release always gives the same card; only the list of files follows the formats exported.
"""

import copy
import re

import yaml
from django.template.loader import render_to_string

from .records import FEATURES_YAML, FIELDS
from .splits import SPLITS

FORMATS = ("jsonl", "csv", "parquet")
# The default configuration uses the first exported format of this order (Parquet keeps the types).
DEFAULT_FORMAT_ORDER = ("parquet", "jsonl", "csv")
BUILDER_OF = {"jsonl": "json", "csv": "csv", "parquet": "parquet"}

FIELD_DESCRIPTIONS = {
    "id": "The item's external id, or `<project>-<item number>`.",
    "question": "The causal question.",
    "context": "Context shown with the question (a group's shared context when the item has none).",
    "answer": "The reference answer.",
    "answer_by": "`human` or `model`: who wrote the reference answer.",
    "answer_model": "The model that wrote the answer, when a model did.",
    "answer_prompt": "The prompt template and version it used.",
    "causal_class": "Pearl's rung (associational / interventional / counterfactual) or the project's label.",
    "topic": "The topic (cluster) the question belongs to.",
    "origin": "`natural` (asked by people) or `generated` (written by a model).",
    "source": "Where a natural question came from.",
    "group": "Items that share a scenario or seed; a group is never split across train, dev and test.",
    "position_in_group": "Order within the group.",
    "options": "Multiple-choice options: letter, text, role (correct or the distractor's category) and rationale. "
    "In CSV, a JSON list.",
    "correct_option": "Letter(s) of the correct option(s).",
    "review_rounds": "How many review rounds the item went through.",
    "metadata": "Any other fields of the item, as a JSON object in a string.",
}


def data_path(split: str, fmt: str) -> str:
    return f"data/{split}.{fmt}"


def size_category(n: int) -> str:
    for limit, label in (
        (1_000, "n<1K"),
        (10_000, "1K<n<10K"),
        (100_000, "10K<n<100K"),
        (1_000_000, "100K<n<1M"),
    ):
        if n < limit:
            return label
    return "1M<n<10M"


def default_format(formats: tuple[str, ...]) -> str:
    return next(fmt for fmt in DEFAULT_FORMAT_ORDER if fmt in formats)


def card_header(release, facts: dict, formats: tuple[str, ...]) -> dict:
    """The YAML header. `datasets` picks one file format per folder, so the configuration lists the split
    files of one format (Parquet when exported); the card's text says how to load the others."""
    fmt = default_format(formats)
    splits = [split for split in SPLITS if facts["splits"].get(split)]
    features = [
        {"name": "options", "dtype": "string"}
        if fmt == "csv" and feature["name"] == "options"
        else copy.deepcopy(feature)  # separate objects, or YAML would write anchors and aliases
        for feature in FEATURES_YAML
    ]
    language = (release.project.language or "").split("-")[0].lower()
    return {
        "pretty_name": f"{release.project.name} {release.tag}",
        "license": release.license or "other",
        "language": [language] if language else [],
        "task_categories": ["question-answering"],
        "tags": ["causal-reasoning", "causal-qa", "causalqa-studio"],
        "size_categories": [size_category(facts["n_items"])],
        "configs": [
            {
                "config_name": "default",
                "data_files": [{"split": split, "path": data_path(split, fmt)} for split in splits],
            }
        ],
        "dataset_info": {"config_name": "default", "features": features},
    }


def render_card(release, facts: dict, formats: tuple[str, ...] = FORMATS) -> str:
    """The card's Markdown, from ``evaluation/release_card/card.md`` and the figures below."""
    project = release.project
    agreement_rows = facts.get("agreement") or []
    context = {
        "header": yaml.safe_dump(card_header(release, facts, formats), sort_keys=False, allow_unicode=True),
        "release": release,
        "project": project,
        "facts": facts,
        "name": _text(project.name),
        "description": _text(project.description) if project.description else "",
        "notes": _text(release.notes) if release.notes else "",
        "ratios": _ratios(release.split_ratios),
        "classes": _class_table(facts),
        "answers": _answers_table(facts),
        "agreement": _agreement_table(agreement_rows)
        if any(r["n_judgments"] for r in agreement_rows)
        else None,
        "aggregation": _aggregation(facts.get("label_aggregation")),
        "funnel": _table(
            ["Stage", "Items"], [[_text(step["stage"]), step["count"]] for step in facts["funnel"]]
        ),
        "topics": _topics(facts.get("topics")),
        "models": _table(
            ["Model", "Prompt", "Used for", "Items"],
            [
                [_text(m["model"] or "—"), _text(m["prompt"] or "—"), _text(m["role"]), m["items"]]
                for m in facts["models"]
            ],
        )
        if facts["models"]
        else None,
        "formats": [fmt for fmt in DEFAULT_FORMAT_ORDER if fmt in formats],
        "default_format": default_format(formats),
        "harness": "\n".join(_harness_lines(release, facts)),
        "fields": _table(["Field", "Meaning"], [[f"`{name}`", FIELD_DESCRIPTIONS[name]] for name in FIELDS]),
        "license": release.license or "other",
        "citation": (release.citation or default_citation(release, facts)).strip(),
    }
    return render_to_string("evaluation/release_card/card.md", context)


def _class_table(facts: dict) -> dict:
    by_class = facts["by_class_split"]
    rows = [
        [_text(label), *[by_class[label].get(split, 0) for split in SPLITS], sum(by_class[label].values())]
        for label in facts["classes"]
    ]
    rows.append(["**Total**", *[facts["splits"].get(split, 0) for split in SPLITS], facts["n_items"]])
    return _table(["Class", *SPLITS, "Total"], rows)


ANSWER_COUNTS = ("count", "human", "model", "natural", "generated")


def _answers_table(facts: dict) -> dict:
    """As in Table 3 of Causal_QA.PT: answers by class and by who wrote them, questions by where they came from."""
    rows = [[_text(row["class"]), *[row.get(key, 0) for key in ANSWER_COUNTS]] for row in facts["answers"]]
    rows.append(["**Total**", *[sum(row.get(key, 0) for row in facts["answers"]) for key in ANSWER_COUNTS]])
    return _table(
        ["Class", "Count", "Human-answered", "Model-answered", "Natural questions", "Generated questions"],
        rows,
    )


def _topics(topics: dict | None) -> dict | None:
    if not topics:
        return None
    return {**topics, "embedding_model": _text(topics["embedding_model"]), "clustering": topics["clustering"]}


def _harness_lines(release, facts: dict) -> list[str]:
    from .harnesses import card_section  # it reads the prompt templates: only when a card is rendered

    return card_section(release, facts)


def default_citation(release, facts: dict) -> str:
    project = release.project
    authors = " and ".join(_bibtex(name) for name in facts.get("authors", [])) or _bibtex(project.name)
    key = re.sub(r"[^A-Za-z0-9]+", "_", project.slug) + f"_{release.tag}"
    return (
        f"@misc{{{key},\n"
        f"  title = {{{_bibtex(project.name)}, release {release.tag}}},\n"
        f"  author = {{{authors}}},\n"
        f"  year = {{{facts['cut_on'][:4]}}},\n"
        f"  note = {{Gold release {release.tag} made with CausalQA Studio; SHA-256 {release.checksum}}}\n"
        f"}}"
    )


def _agreement_table(rows: list[dict]) -> dict:
    return _table(
        ["Criterion", "Level", "Units", "Krippendorff's α", "Fleiss' κ", "Mean pairwise Cohen's κ"],
        [
            [
                _text(row["label"]),
                row["level"],
                row["units"],
                _figure(row["krippendorff_alpha"]),
                _figure(row["fleiss_kappa"]),
                _figure(row["cohen_kappa"]),
            ]
            for row in rows
        ],
    )


def _figure(figure: dict | None) -> str:
    if not figure or figure.get("value") is None:
        return "undefined" + (f" ({_text(figure['note'])})" if figure and figure.get("note") else "")
    text = f"{figure['value']:.3f}"
    if figure.get("ci95"):
        text += f" [{figure['ci95'][0]:.3f}, {figure['ci95'][1]:.3f}]"
    if figure.get("reading"):
        text += f" {figure['reading']}"
    return text


def _table(header: list, rows: list[list]) -> dict:
    """A Markdown table for ``evaluation/release_card/_table.md``: its cells as text."""
    return {"header": [str(cell) for cell in header], "rows": [[str(cell) for cell in row] for row in rows]}


def _text(value) -> str:
    """User text inside a Markdown table or line: no pipes or line breaks that would break the layout."""
    return str(value).replace("|", "\\|").replace("\r", " ").replace("\n", " ").strip()


def _ratios(ratios: dict) -> str:
    return " / ".join(f"{ratios.get(split, 0):g}" for split in SPLITS)


def _bibtex(text: str) -> str:
    return re.sub(r"[{}\\]", "", str(text))


METHOD_NAMES = {"majority": "majority vote", "dawid_skene": "Dawid–Skene", "mace": "MACE"}


def _aggregation(aggregation: dict | None) -> dict | None:
    """Which aggregation proposed the gold labels (a curator decided each), and what the annotator models found."""
    if not aggregation:
        return None
    method = METHOD_NAMES.get(aggregation["method"], aggregation["method"])
    if not aggregation["questions"]:
        return {"method": method, "table": None}
    rows = []
    for line in aggregation["questions"]:
        least = line["least_competent"]
        rows.append(
            [
                _text(line["question"]),
                line["items"],
                "—" if line["mean_probability"] is None else f"{line['mean_probability']:.3f}",
                line["differs"].get("dawid_skene", 0),
                line["differs"].get("mace", 0),
                line["control_items"],
                "—"
                if least is None
                else f"{_text(least['annotator'])} {least['competence']:.2f} "
                f"[{least['low']:.2f}, {least['high']:.2f}]",
            ]
        )
    table = _table(
        [
            "Question",
            "Items",
            f"Mean probability ({method})",
            "Dawid–Skene ≠ majority",
            "MACE ≠ majority",
            "Control items",
            "Least competent annotator (95% interval)",
        ],
        rows,
    )
    return {"method": method, "table": table}
