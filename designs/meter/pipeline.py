"""METER's pipeline (paper, section 3.2), one service per step. Every door calls these: the generation jobs
(de-contamination votes, generated questions), the judgment service (verification, editing and filtering
rounds close here) and the demo.

An *entry* is an ``ItemGroup`` of kind "entry": a context and a cause–effect pair (``metadata["cause"]``,
``metadata["effect"]``). Its stage (``metadata["stage"]``) moves

    pair → decontamination → verification → generation → editing → (its questions: editing → filtering → approval)

or to "discarded" with the reason. Verification judges a *pair item* (``metadata["role"] == "pair"``, never
released); once the pair is verified the three question items (L1, L2, L3) are generated. Each question goes
through an editing round (round 1) and a filtering round (round 2); ``metadata["rounds"]`` records which stage
each round was, so agreement is broken down by the stage the judgments were made in.
"""

from django.db import transaction
from django.db.models import Count, Q
from django.utils import timezone

from annotation.models import Item, ItemGroup, Judgment, Project
from annotation.services import Author, item_close, item_create, item_start_round

from .stems import LEVELS, ROLES, option_positions

ENTRY = "entry"
PAIR, QUESTION = "pair", "question"
ENTRY_STAGES = ("pair", "decontamination", "verification", "generation", "editing")
QUESTION_STAGES = ("editing", "filtering", "approval")
DISCARDED = "discarded"
YES, NO = "yes", "no"
FILTER_CRITERIA = ("level_alignment", "faithfulness", "fluency", "accuracy", "distractor_alignment")
DEFAULT_SEED = 13


class MeterError(ValueError):
    """An entry or question does not fit METER's shape; the message names what and where."""


def seed_of(project: Project) -> int:
    return int((project.design_settings or {}).get("seed", DEFAULT_SEED))


# --- entries -------------------------------------------------------------------------------


def entry_create(*, project: Project, external_id: str, context: str, cause: str, effect: str) -> ItemGroup:
    """A cause–effect pair in its context: the first stage of an entry."""
    missing = [
        name
        for name, value in (("context", context), ("cause", cause), ("effect", effect))
        if not value.strip()
    ]
    if missing:
        raise MeterError(f"entry {external_id!r}: {', '.join(missing)} must not be empty")
    return ItemGroup.objects.create(
        project=project,
        kind=ENTRY,
        external_id=external_id,
        context=context.strip(),
        metadata={"cause": cause.strip(), "effect": effect.strip(), "stage": "pair"},
    )


def entries(project: Project, *stages: str):
    found = ItemGroup.objects.filter(project=project, kind=ENTRY)
    return found.filter(metadata__stage__in=stages) if stages else found


def _discard(entry: ItemGroup, reason: str) -> None:
    entry.metadata = {**entry.metadata, "stage": DISCARDED, "discarded_because": reason}
    entry.save(update_fields=["metadata"])


# --- de-contamination --------------------------------------------------------------------


@transaction.atomic
def decontamination_vote(
    *, entry: ItemGroup, model: str, vote: str, call_id: int | None, voters: int
) -> ItemGroup:
    """Store one model's answer to "does A cause B?" (asked without the context). Once all ``voters`` have
    answered, the pair goes on to verification only if every one said no; otherwise it is discarded."""
    entry = ItemGroup.objects.select_for_update().get(pk=entry.pk)
    if vote not in (YES, NO):
        raise MeterError(f"entry {entry}: a de-contamination vote is 'yes' or 'no', not {vote!r}")
    metadata = dict(entry.metadata)
    record = dict(metadata.get("decontamination") or {"votes": []})
    votes = [
        existing for existing in record["votes"] if existing.get("call_id") != call_id or call_id is None
    ]
    votes.append({"model": model, "vote": vote, "call_id": call_id, "at": timezone.now().isoformat()})
    record.update(votes=votes, voters=voters)
    metadata["decontamination"] = record
    if metadata.get("stage") in ("pair", "decontamination"):
        metadata["stage"] = "decontamination"
        if len(votes) >= voters:
            known = [v["model"] for v in votes if v["vote"] == YES]
            record["kept"] = not known
            metadata["stage"] = "verification" if not known else DISCARDED
            if known:
                metadata["discarded_because"] = (
                    "contaminated: " + ", ".join(known) + " said A causes B without context"
                )
    entry.metadata = metadata
    entry.save(update_fields=["metadata"])
    if metadata["stage"] == "verification":
        pair_item_create(entry=entry)
    return entry


def pair_item_create(*, entry: ItemGroup) -> Item:
    """The item three annotators judge to verify the pair (accept: well formed; reject: discard the entry)."""
    existing = entry.items.filter(metadata__role=PAIR).first()
    if existing:
        return existing
    cause, effect = entry.metadata["cause"], entry.metadata["effect"]
    question = f"{cause} → {effect}"
    return item_create(
        project=entry.project,
        group_id=entry.pk,
        question=question,
        external_id=f"{entry.external_id}-pair" if entry.external_id else "",
        review=True,
        metadata={"role": PAIR, "stage": "verification", "rounds": {"1": {"stage": "verification"}}},
        note="cause–effect pair to verify",
    )


# --- generated questions ------------------------------------------------------------------


@transaction.atomic
def question_create(
    *,
    entry: ItemGroup,
    level: str,
    question: str,
    answer: str,
    distractors: dict,
    stem: str,
    provenance: dict,
    llm_call_id: int | None = None,
) -> Item:
    """One generated question of an entry with its five options, letters shuffled with the project's seed.

    ``distractors``: role → {"text", "rationale"} for the four categories. When the entry has its three
    questions it moves to editing.
    """
    entry = ItemGroup.objects.select_for_update().get(pk=entry.pk)
    if level not in LEVELS:
        raise MeterError(f"entry {entry}: level {level!r} is not one of {', '.join(LEVELS)}")
    if entry.metadata.get("stage") != "generation":
        raise MeterError(f"entry {entry} is at stage {entry.metadata.get('stage')!r}, not generation")
    if entry.items.filter(metadata__role=QUESTION, metadata__level=level).exists():
        raise MeterError(f"entry {entry} already has its {level} question")
    missing = [role for role in ROLES[1:] if not (distractors.get(role) or {}).get("text", "").strip()]
    if missing or not question.strip() or not answer.strip():
        raise MeterError(f"entry {entry}, {level}: missing {', '.join(missing or ['question or answer'])}")
    external_id = f"{entry.external_id}-{level}" if entry.external_id else ""
    item = item_create(
        project=entry.project,
        group_id=entry.pk,
        position_in_group=LEVELS.index(level) + 1,
        question=question.strip(),
        causal_class=level,
        origin=Item.Origin.GENERATED,
        source=f"model:{provenance.get('model', '')}",
        external_id=external_id,
        reference_answer=answer.strip(),
        author=Author(llm_call_id=llm_call_id, provenance=provenance, by_model=True),
        metadata={
            "role": QUESTION,
            "level": level,
            "stem": stem,
            "stage": "editing",
            "rounds": {"1": {"stage": "editing"}},
        },
        options=options_for(
            key=external_id or f"{entry.pk}-{level}",
            project=entry.project,
            correct={"text": answer, "rationale": ""},
            distractors=distractors,
        ),
        note=f"{level} question, answer and distractors",
    )
    if entry.items.filter(metadata__role=QUESTION).count() == len(LEVELS):
        entry.metadata = {**entry.metadata, "stage": "editing"}
        entry.save(update_fields=["metadata"])
    return item


def options_for(*, key: str, project, correct: dict, distractors: dict) -> list[dict]:
    """The five options of a question at their seeded letters (the correct one included); ``key``: the
    question's external id (its letters are the same in every run of the same seed)."""
    by_role = {"correct": correct, **distractors}
    positions = option_positions(key=key, seed=seed_of(project))
    return [
        {
            "role": role,
            "text": by_role[role]["text"].strip(),
            "rationale": (by_role[role].get("rationale") or "").strip(),
            "position": positions[role],
        }
        for role in ROLES
    ]


# --- rounds that close by vote --------------------------------------------------------------


def round_complete(item: Item) -> None:
    """The last judgment of a round is in: verification, editing and filtering decide here, by the paper's rules."""
    stage = (item.metadata.get("rounds") or {}).get(str(item.round), {}).get("stage")
    judgments = list(
        Judgment.objects.filter(item=item, round=item.round).select_related("annotator").order_by("pk")
    )
    if stage == "verification":
        _verification_close(item, judgments)
    elif stage == "editing":
        _editing_close(item, judgments)
    elif stage == "filtering":
        _filtering_close(item, judgments)


def _note(judgments) -> str:
    return ", ".join(f"{j.annotator.get_username()}: {j.vote}" for j in judgments)


def _verification_close(item: Item, judgments: list[Judgment]) -> None:
    """Any rejection discards the pair (three annotators)."""
    entry = item.group
    rejected = [j for j in judgments if j.vote != Judgment.Vote.ACCEPT]
    decision = "reject" if rejected else "approve"
    item_close(item=item, curator=None, decision=decision, note=f"METER verification ({_note(judgments)})")
    _set_metadata(item, stage="verified" if not rejected else DISCARDED)
    if rejected:
        _discard(
            entry, "rejected in verification by " + ", ".join(j.annotator.get_username() for j in rejected)
        )
    else:
        entry.metadata = {**entry.metadata, "stage": "generation"}
        entry.save(update_fields=["metadata"])


def _editing_close(item: Item, judgments: list[Judgment]) -> None:
    """Two editors edited, the third reviewed; a majority accepting the final version sends it to filtering."""
    accepts = sum(1 for j in judgments if j.vote == Judgment.Vote.ACCEPT)
    roles = {
        "editors": [j.annotator.get_username() for j in judgments[:2]],
        "reviewer": judgments[2].annotator.get_username() if len(judgments) > 2 else "",
        "accepts": accepts,
        "judgments": len(judgments),
    }
    if accepts * 2 > len(judgments):
        next_round = str(item.round + 1)
        rounds = {**item.metadata.get("rounds", {}), next_round: {"stage": "filtering"}}
        _set_metadata(item, stage="filtering", rounds=rounds, editing=roles)
        item_start_round(item=item)
    else:
        _set_metadata(item, stage=DISCARDED, editing=roles)
        item_close(
            item=item,
            curator=None,
            decision="reject",
            note=f"METER editing: no majority ({_note(judgments)})",
        )
        _discard(item.group, f"{item.metadata.get('level')} question rejected in editing")


def _filtering_close(item: Item, judgments: list[Judgment]) -> None:
    """Each annotation passes when all five criteria pass; a majority of passing annotations keeps the question,
    which then waits for a curator's approval. Otherwise it is discarded."""
    passes = [all(int((j.ratings or {}).get(key, 0)) == 1 for key in FILTER_CRITERIA) for j in judgments]
    per_criterion = {
        key: sum(int((j.ratings or {}).get(key, 0)) == 1 for j in judgments) for key in FILTER_CRITERIA
    }
    verdict = {
        "passes": sum(passes),
        "judgments": len(judgments),
        "per_criterion": per_criterion,
        "kept": sum(passes) * 2 > len(judgments),
    }
    if verdict["kept"]:
        _set_metadata(item, stage="approval", filtering=verdict)
    else:
        _set_metadata(item, stage=DISCARDED, filtering=verdict)
        item_close(
            item=item,
            curator=None,
            decision="reject",
            note=f"METER filtering: {verdict['passes']} of {len(judgments)} annotations pass",
        )
        _discard(item.group, f"{item.metadata.get('level')} question failed filtering")


def _set_metadata(item: Item, **values) -> None:
    item.refresh_from_db(fields=["metadata"])
    item.metadata = {**item.metadata, **values}
    Item.objects.filter(pk=item.pk).update(metadata=item.metadata)


# --- what is gold --------------------------------------------------------------------------


def gold_entries(groups):
    """Of ``groups``, the entries whose three questions are all approved: only these are gold (and released)."""
    approved = Count("items", filter=Q(items__metadata__role=QUESTION, items__status=Item.Status.APPROVED))
    return groups.filter(kind=ENTRY).annotate(approved=approved).filter(approved=len(LEVELS)).values("pk")


def entry_stage(entry: ItemGroup, questions: list[Item]) -> str:
    """Where an entry stands: its own stage until it has questions, then the least advanced question's."""
    stage = entry.metadata.get("stage", "pair")
    if stage == DISCARDED or not questions or stage != "editing":
        return stage
    if len(questions) == len(LEVELS) and all(q.status == Item.Status.APPROVED for q in questions):
        return "gold"
    stages = [q.metadata.get("stage", "editing") for q in questions if q.status != Item.Status.APPROVED]
    return min(stages, key=lambda s: QUESTION_STAGES.index(s) if s in QUESTION_STAGES else 0)


def stage_counts(project: Project) -> dict[str, int]:
    counts: dict[str, int] = {}
    questions: dict[int, list[Item]] = {}
    for item in Item.objects.filter(project=project, metadata__role=QUESTION).only(
        "group_id", "status", "metadata"
    ):
        questions.setdefault(item.group_id, []).append(item)
    for entry in entries(project).only("pk", "metadata"):
        stage = entry_stage(entry, questions.get(entry.pk, []))
        counts[stage] = counts.get(stage, 0) + 1
    return counts
