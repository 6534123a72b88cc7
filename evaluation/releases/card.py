"""The dataset card of a release: Markdown with a YAML header in the Hugging Face dataset-card format.

The card is rendered from ``release.counts`` (the figures frozen when the release was cut), so the
same release always gives the same card; only the list of files follows the formats exported.
"""

import copy
import re

import yaml

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
    header = yaml.safe_dump(card_header(release, facts, formats), sort_keys=False, allow_unicode=True)
    project = release.project
    lines = [f"---\n{header}---", "", f"# {_text(project.name)} — {release.tag}", ""]
    if project.description:
        lines += [_text(project.description), ""]
    lines += [
        f"Release **{release.tag}** of the project `{project.slug}`: {facts['n_items']} approved items "
        f"(the gold collection on {facts['cut_on']}), split into train, dev and test with seed {release.seed} "
        f"and ratios {_ratios(release.split_ratios)}, stratified by causal class; items of one group "
        f"({facts['n_groups']} groups) always share a split. Later edits to the items never change this release.",
        "",
        f"Release checksum (SHA-256): `{release.checksum}`",
        "",
        "## Items per class and split",
        "",
        *_table(
            ["Class", *SPLITS, "Total"],
            [
                [
                    _text(label),
                    *[facts["by_class_split"][label].get(split, 0) for split in SPLITS],
                    sum(facts["by_class_split"][label].values()),
                ]
                for label in facts["classes"]
            ]
            + [["**Total**", *[facts["splits"].get(split, 0) for split in SPLITS], facts["n_items"]]],
        ),
        "",
        "## Answers written by people and by models",
        "",
        "As in Table 3 of Causal_QA.PT: reference answers by class and by who wrote them, and the questions by "
        "where they came from (natural, or generated by a model).",
        "",
        *_table(
            [
                "Class",
                "Count",
                "Human-answered",
                "Model-answered",
                "Natural questions",
                "Generated questions",
            ],
            [
                [
                    _text(row["class"]),
                    *[row.get(key, 0) for key in ("count", "human", "model", "natural", "generated")],
                ]
                for row in facts["answers"]
            ]
            + [
                [
                    "**Total**",
                    *[
                        sum(row.get(key, 0) for row in facts["answers"])
                        for key in ("count", "human", "model", "natural", "generated")
                    ],
                ]
            ],
        ),
        "",
        "## Agreement between annotators",
        "",
    ]
    lines += _agreement_lines(facts)
    lines += _aggregation_lines(facts.get("label_aggregation"))
    lines += ["", "## From import to gold", ""]
    lines += _table(["Stage", "Items"], [[_text(step["stage"]), step["count"]] for step in facts["funnel"]])
    if facts.get("topics"):
        topics = facts["topics"]
        used = topics["clustering"]
        lines += [
            "",
            "## Topics",
            "",
            f"The `topic` field comes from topic-modelling run #{topics['run']}: question embeddings of "
            f"`{_text(topics['embedding_model'])}`, reduced with PCA and clustered with HDBSCAN"
            + (
                f" (smallest topic {used['min_cluster_size']}, core neighbours {used['min_samples']}, "
                f"{used['dimensions']} dimensions)"
                if used
                else ""
            )
            + f", {topics['topics']} topics named and selected by curators.",
        ]
    lines += ["", "## Models and prompt versions", ""]
    if facts["models"]:
        lines += _table(
            ["Model", "Prompt", "Used for", "Items"],
            [
                [_text(m["model"] or "—"), _text(m["prompt"] or "—"), _text(m["role"]), m["items"]]
                for m in facts["models"]
            ],
        )
    else:
        lines.append("No released text was written by a model.")
    lines += ["", "## Files", ""]
    lines += [
        f"- `{data_path('<split>', fmt)}` ({fmt.upper()})" for fmt in DEFAULT_FORMAT_ORDER if fmt in formats
    ]
    lines += [
        "- `checksums.txt`: the SHA-256 of every file (`sha256sum -c checksums.txt`).",
        "- The release checksum is the SHA-256 of `data/train.jsonl`, `data/dev.jsonl` and `data/test.jsonl` "
        "concatenated in that order (one JSON object per line, keys sorted, no spaces).",
        "- In the CSV files, a cell that starts with `=`, `+`, `-` or `@` is prefixed with `'` so spreadsheet "
        "programs do not run it as a formula; the JSONL and Parquet files hold the text unchanged.",
        "",
        'Load it with the Hugging Face `datasets` library: `datasets.load_dataset("path/to/this/folder")` '
        f"(the {default_format(formats)} files). Another format loads by naming its files, e.g. "
        '`datasets.load_dataset("json", data_files={"train": "data/train.jsonl", "dev": "data/dev.jsonl", '
        '"test": "data/test.jsonl"})`.',
        "",
        *_harness_lines(release, facts),
        "## Fields",
        "",
        *_table(["Field", "Meaning"], [[f"`{name}`", FIELD_DESCRIPTIONS[name]] for name in FIELDS]),
        "",
        "## License",
        "",
        f"`{release.license or 'other'}`",
        "",
        "## Citation",
        "",
        "```bibtex",
        (release.citation or default_citation(release, facts)).strip(),
        "```",
        "",
    ]
    if release.notes:
        lines[lines.index("## Items per class and split") : lines.index("## Items per class and split")] = [
            "## Notes",
            "",
            _text(release.notes),
            "",
        ]
    return "\n".join(lines)


def _harness_lines(release, facts: dict) -> list[str]:
    from .harnesses import card_section  # it reads the prompt templates: only when a card is rendered

    lines = card_section(release, facts)
    return [*lines, ""] if lines else []


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


def _agreement_lines(facts: dict) -> list[str]:
    rows = facts.get("agreement") or []
    if not any(row["n_judgments"] for row in rows):
        return ["The released items have no recorded judgments."]
    out = [
        f"Judgments of the released items over all review rounds ({facts['agreement_judgments']} judgments; "
        "a unit is an item in one round). 95% intervals: percentile bootstrap over units, "
        f"{facts['agreement_bootstrap']['resamples']} resamples, seed {facts['agreement_bootstrap']['seed']}. "
        "Kappa is read by Landis & Koch; alpha by Krippendorff (reliable from 0.800, tentative from 0.667).",
        "",
    ]
    table_rows = []
    for row in rows:
        table_rows.append(
            [
                _text(row["label"]),
                row["level"],
                row["units"],
                _figure(row["krippendorff_alpha"]),
                _figure(row["fleiss_kappa"]),
                _figure(row["cohen_kappa"]),
            ]
        )
    return out + _table(
        ["Criterion", "Level", "Units", "Krippendorff's α", "Fleiss' κ", "Mean pairwise Cohen's κ"],
        table_rows,
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


def _table(header: list, rows: list[list]) -> list[str]:
    lines = ["| " + " | ".join(map(str, header)) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return lines


def _text(value) -> str:
    """User text inside a Markdown table or line: no pipes or line breaks that would break the layout."""
    return str(value).replace("|", "\\|").replace("\r", " ").replace("\n", " ").strip()


def _ratios(ratios: dict) -> str:
    return " / ".join(f"{ratios.get(split, 0):g}" for split in SPLITS)


def _bibtex(text: str) -> str:
    return re.sub(r"[{}\\]", "", str(text))


METHOD_NAMES = {"majority": "majority vote", "dawid_skene": "Dawid–Skene", "mace": "MACE"}


def _aggregation_lines(aggregation: dict | None) -> list[str]:
    """Which aggregation proposed the gold labels (a curator decided each), and what the annotator models found."""
    if not aggregation:
        return []
    method = METHOD_NAMES.get(aggregation["method"], aggregation["method"])
    lines = [
        "",
        "## Label aggregation",
        "",
        f"The labels put to the curators were proposed by **{method}** over each item's judgments; a curator "
        "decided every item. Beside it, the annotator models (Dawid–Skene, MACE) weigh each annotator by their "
        "estimated competence; the table says how often they differ from the majority.",
        "",
    ]
    if not aggregation["questions"]:
        return [*lines, "No categorical judgments to aggregate."]
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
    return lines + _table(
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
