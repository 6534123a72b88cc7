"""Quality control, simulated: fixed overlap 3 against the adaptive overlap, majority vote against Dawid–Skene/MACE.

    .venv/bin/python benchmarks/quality_control.py [--items 300] [--annotators 20] [--seed 7] [--quick]

Annotators with known competences (a share of spammers who answer at random, one adversary who avoids the
right class, the others right 70–95 % of the time) label the causal class of items whose true class is known.
Everything goes through the platform's own services: the queue hands out the items (``assignment_next``),
the judgments are submitted (``judgment_submit``), the adaptive overlap decides after each judgment whether the
item wants another, and the labels are aggregated as the pages show them (``evaluation.quality``). Two
projects on the same items and annotators: overlap fixed at 3, and adaptive (at least 1, at most 5, more while
the MACE label's probability is below 0.9). Prints a table of judgments spent and label accuracy per
aggregation; ends with one JSON line.
"""

import argparse
import json
import time

import _django
import numpy as np

CLASSES = ["associational", "interventional", "counterfactual"]
# The adaptive project's rule (the command line may change it).
RULE = {"at_least": 1, "at_most": 5, "threshold": 0.9, "method": "mace"}


def annotator_profiles(n: int, spam_share: float, rng) -> dict[str, tuple[str, float]]:
    """name → (kind, accuracy): spammers pick any class, the adversary the wrong ones, the rest 70–95 % right."""
    n_spam = round(n * spam_share)
    profiles = {"adversary": ("adversary", 0.05)}
    for index in range(n_spam):
        profiles[f"spammer{index + 1}"] = ("spammer", 1 / len(CLASSES))
    for index in range(n - n_spam - 1):
        profiles[f"annotator{index + 1}"] = ("good", float(rng.uniform(0.7, 0.95)))
    return profiles


def answer(kind: str, accuracy: float, true: str, rng) -> str:
    if kind == "spammer":
        return CLASSES[rng.integers(len(CLASSES))]
    if rng.random() < accuracy:
        return true
    return [label for label in CLASSES if label != true][rng.integers(len(CLASSES) - 1)]


def run_project(
    *, slug: str, truth_texts: list[tuple[str, str]], users: dict, profiles: dict, adaptive: bool, seed: int
):
    """Create the project, let the annotators work until the queue is empty; return (project, truth by item id,
    judgments spent, seconds)."""
    from annotation.judging import judgment_submit
    from annotation.models import Item, Membership, Project
    from annotation.queue import assignment_next

    project = Project.objects.create(
        name=slug,
        slug=slug,
        overlap=RULE["at_least"] if adaptive else 3,
        overlap_max=RULE["at_most"] if adaptive else None,
        overlap_threshold=RULE["threshold"],
        aggregation=RULE["method"] if adaptive else "majority",
        criteria=[],
        allow_self_review=False,
    )
    for user in users.values():
        Membership.objects.create(user=user, project=project, role=Membership.Role.ANNOTATOR)
    items = Item.objects.bulk_create(
        Item(
            project=project,
            question=text,
            reference_answer="Uma resposta de referência.",
            answer_by=Item.AnswerBy.HUMAN,
            status=Item.Status.IN_REVIEW,
            round=1,
            text_key=f"{slug}-{index}",
        )
        for index, (text, _true) in enumerate(truth_texts)
    )
    truth = {item.pk: true for item, (_text, true) in zip(items, truth_texts, strict=True)}
    rng = np.random.default_rng(seed)
    active = list(users)
    judgments = 0
    started = time.perf_counter()
    while active:
        name = active[rng.integers(len(active))]
        assignment = assignment_next(project=project, annotator=users[name])
        if assignment is None:
            active.remove(name)  # nothing left for them: the queue only shrinks for a given annotator
            continue
        kind, accuracy = profiles[name]
        label = answer(kind, accuracy, truth[assignment.item_id], rng)
        judgment_submit(assignment=assignment, ratings={}, vote="accept", causal_class=label)
        judgments += 1
    return project, truth, judgments, time.perf_counter() - started


def accuracies(project, truth: dict) -> dict[str, float]:
    from evaluation.quality.aggregation import METHODS
    from evaluation.quality.selectors import project_quality

    quality = project_quality(project, resamples=200)
    question = next(q for q in quality.questions if q.key == "causal_class")
    return {
        method: sum(question.methods[method].labels.get(item) == true for item, true in truth.items())
        / len(truth)
        for method in METHODS
    }


METHOD_NAMES = {"majority": "majority vote", "dawid_skene": "Dawid–Skene", "mace": "MACE"}


def table(f: dict) -> list[str]:
    """The run's table and what it shows, from its JSON line alone: the script prints it, and
    ``scripts/docs_pages.py`` writes it into docs/quality-control.md from ``benchmarks/results.jsonl``."""
    rule = f["adaptive_rule"]
    method = METHOD_NAMES[rule["method"]]
    lines = [
        f"{f['items']} items, {f['annotators']} annotators ({f['spammers']} spammers, 1 adversary), "
        f"{len(CLASSES)} classes, database {f['database']}.",
        "",
        "| overlap | judgments | per item | majority | Dawid–Skene | MACE |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for name, key in (
        ("fixed 3", "fixed3"),
        (f"adaptive {rule['at_least']}–{rule['at_most']}, p ≥ {rule['threshold']} ({method})", "adaptive"),
    ):
        spent = f[f"judgments_{key}"]
        lines.append(
            f"| {name} | {spent} | {spent / f['items']:.2f} | {f[f'accuracy_{key}_majority']:.3f} | "
            f"{f[f'accuracy_{key}_dawid_skene']:.3f} | {f[f'accuracy_{key}_mace']:.3f} |"
        )
    fixed = f["accuracy_fixed3_majority"]
    models = (f["accuracy_fixed3_dawid_skene"], f["accuracy_fixed3_mace"])
    spam_share = f["spammers"] / f["annotators"]
    lines += [
        "",
        f"Label accuracy against the true classes. The adaptive overlap spent "
        f"**{f['judgments_saved_share']:.0%} fewer judgments** ({f['judgments_adaptive']} against "
        f"{f['judgments_fixed3']}) for a gold-label accuracy ({method}) of {f['accuracy_adaptive']:.3f} against "
        f"{fixed:.3f} for fixed overlap 3 with majority vote: "
        + ("the same or better." if f["accuracy_adaptive"] >= fixed else "**worse**.")
        + f" With {spam_share:.0%} spammers, Dawid–Skene ({models[0]:.3f}) and MACE ({models[1]:.3f}) are "
        + ("both at least as accurate as" if min(models) >= fixed else "**not both as accurate as**")
        + f" the majority ({fixed:.3f}) on the same judgments.",
    ]
    return lines


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--items", type=int, default=300)
    parser.add_argument("--annotators", type=int, default=20)
    parser.add_argument("--spam-share", type=float, default=0.2)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--at-least", type=int, default=RULE["at_least"])
    parser.add_argument("--at-most", type=int, default=RULE["at_most"])
    parser.add_argument("--threshold", type=float, default=RULE["threshold"])
    parser.add_argument("--method", default=RULE["method"], choices=["majority", "dawid_skene", "mace"])
    parser.add_argument("--quick", action="store_true", help="120 items")
    args = parser.parse_args()
    RULE.update(at_least=args.at_least, at_most=args.at_most, threshold=args.threshold, method=args.method)
    if args.quick:
        args.items = min(args.items, 120)
    _django.setup("quality_control")
    from django.contrib.auth import get_user_model

    rng = np.random.default_rng(args.seed)
    profiles = annotator_profiles(args.annotators, args.spam_share, rng)
    users = {name: get_user_model().objects.create(username=name) for name in profiles}
    truth_texts = [
        (f"Pergunta simulada número {n}: por que isso acontece?", CLASSES[rng.integers(3)])
        for n in range(args.items)
    ]

    fixed, fixed_truth, fixed_judgments, fixed_seconds = run_project(
        slug="fixed-3",
        truth_texts=truth_texts,
        users=users,
        profiles=profiles,
        adaptive=False,
        seed=args.seed,
    )
    adaptive, adaptive_truth, adaptive_judgments, adaptive_seconds = run_project(
        slug="adaptive",
        truth_texts=truth_texts,
        users=users,
        profiles=profiles,
        adaptive=True,
        seed=args.seed,
    )
    fixed_accuracy = accuracies(fixed, fixed_truth)
    adaptive_accuracy = accuracies(adaptive, adaptive_truth)

    n_spam = sum(kind == "spammer" for kind, _ in profiles.values())
    saved = 1 - adaptive_judgments / fixed_judgments
    result = {
        "benchmark": "quality_control",
        "database": _django.database_label(),
        "items": args.items,
        "annotators": len(profiles),
        "spammers": n_spam,
        "judgments_fixed3": fixed_judgments,
        "judgments_adaptive": adaptive_judgments,
        "judgments_saved_share": round(saved, 4),
        "accuracy_fixed3_majority": round(fixed_accuracy["majority"], 4),
        "accuracy_fixed3_dawid_skene": round(fixed_accuracy["dawid_skene"], 4),
        "accuracy_fixed3_mace": round(fixed_accuracy["mace"], 4),
        "adaptive_rule": RULE,
        "accuracy_adaptive": round(adaptive_accuracy[RULE["method"]], 4),
        "accuracy_adaptive_majority": round(adaptive_accuracy["majority"], 4),
        "accuracy_adaptive_dawid_skene": round(adaptive_accuracy["dawid_skene"], 4),
        "accuracy_adaptive_mace": round(adaptive_accuracy["mace"], 4),
        "seconds_fixed3": round(fixed_seconds, 2),
        "seconds_adaptive": round(adaptive_seconds, 2),
        "goal_fewer_judgments": saved >= 0.3,
        "goal_same_or_better_accuracy": adaptive_accuracy[RULE["method"]] >= fixed_accuracy["majority"],
        "goal_models_at_least_majority": min(fixed_accuracy["dawid_skene"], fixed_accuracy["mace"])
        >= fixed_accuracy["majority"],
    }
    print("\n".join(table(result)))
    print()
    print(json.dumps(result))


if __name__ == "__main__":
    main()
