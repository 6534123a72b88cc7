"""CausalBench's answer check: a second, independent answer to every question, and adjudication when they differ.

The second answer comes from another model (a generation job of kind ``causalbench_check``) or
from an annotator who does not see the first answer (``causalbench_check_page``); an annotator answers only the
question the check queue handed them (an ``Assignment``), never one they pick. It is kept in
``item.metadata["check"]`` with who gave it. When it agrees with the item's answer the item is
approved at once; when it differs the item waits in the curators' adjudication queue, where a
curator settles the answer (and the item is approved) or rejects the question.
"""

import json
from collections import Counter, defaultdict
from dataclasses import dataclass, field

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Q, QuerySet
from django.utils import timezone
from django.utils.translation import gettext as _

from annotation.models import Assignment, CurationDecision, Item, Project
from annotation.services import Author, item_close, item_revise

from .design import AWAITING_CHECK, DOMAINS, PERSPECTIVES, QUESTION_TYPES, normalise_answer

AGREED, DISPUTED, ADJUDICATED = "agreed", "disputed", "adjudicated"
Decision = CurationDecision.Decision


class CheckRefused(Exception):
    """The check cannot be recorded; the message says why, for the person."""


@transaction.atomic
def check_record(
    *,
    item: Item,
    answer: str,
    explanation: str = "",
    checker=None,
    model: str = "",
    call_id: int | None = None,
) -> dict:
    """Record the second answer of ``item`` by an annotator (``checker``) or a model (``model``, ``call_id``).

    Agreeing answers approve the item; differing ones send it to adjudication. Returns the check.
    """
    clean = normalise_answer(answer)
    if clean is None:
        raise ValidationError({"answer": _("answer yes or no")})
    item = Item.objects.select_for_update().get(pk=item.pk)
    if item.status != Item.Status.IN_REVIEW:
        raise CheckRefused(_("This question is no longer waiting for a check."))
    if "check" in (item.metadata or {}):
        raise CheckRefused(_("This question already has its second answer."))
    if checker is not None and item.answer_author_id == checker.pk:
        raise CheckRefused(
            _("The second answer must come from someone other than the first answer's author.")
        )
    handed = None
    if checker is not None:
        handed = Assignment.objects.filter(
            item=item, annotator=checker, status=Assignment.Status.ACTIVE
        ).first()
        if handed is None:
            raise CheckRefused(_("This question was not handed to you by the check queue."))
    first = normalise_answer(item.reference_answer)
    check = {
        "answer": clean,
        "explanation": (explanation or "").strip(),
        "first_answer": first,
        "by": "annotator" if checker is not None else "model",
        "checker": checker.get_username() if checker is not None else "",
        "model": model,
        "call_id": call_id,
        "agrees": clean == first,
        "status": AGREED if clean == first else DISPUTED,
        "at": timezone.now().isoformat(),
    }
    item.metadata = {
        **(item.metadata or {}),
        "check": check,
        "stage": "check" if clean == first else "adjudication",
    }
    item.save(update_fields=["metadata", "updated_at"])
    if handed is not None:
        handed.status, handed.finished_at = Assignment.Status.SUBMITTED, timezone.now()
        handed.save(update_fields=["status", "finished_at"])
    if check["agrees"]:
        who = check["checker"] or check["model"]
        item_close(
            item=item,
            curator=None,
            decision=Decision.APPROVE,
            note=f"Answer check: the second, independent answer ({who}) agrees: {clean}.",
        )
    return check


@transaction.atomic
def check_adjudicate(*, item: Item, curator, answer: str, note: str = "") -> Item:
    """Settle a disputed question: ``answer`` "yes" or "no" (the item's answer becomes it and the item is approved)
    or "reject" (the question leaves the benchmark)."""
    item = Item.objects.select_for_update().get(pk=item.pk)
    check = (item.metadata or {}).get("check") or {}
    if item.status != Item.Status.IN_REVIEW or check.get("status") != DISPUTED:
        raise CheckRefused(_("Only a question whose two answers differ waits for adjudication."))
    final = "reject" if answer == "reject" else normalise_answer(answer)
    if final is None:
        raise ValidationError({"answer": _("choose yes, no or reject")})
    note = (note or "").strip()
    if final not in ("reject", check["first_answer"]):
        item = item_revise(
            item=item,
            changes={"reference_answer": final},
            author=Author(user=curator),
            note=note or "adjudicated answer",
        )
    item.metadata = {
        **item.metadata,
        "stage": "adjudication",
        "check": {
            **check,
            "status": ADJUDICATED,
            "final_answer": final,
            "adjudicated_by": curator.get_username() if curator else "",
            "adjudication_note": note,
        },
    }
    item.save(update_fields=["metadata", "updated_at"])
    decision = Decision.REJECT if final == "reject" else Decision.APPROVE
    item_close(
        item=item,
        curator=curator,
        decision=decision,
        note=f"Adjudicated ({check['first_answer']} vs {check['answer']}): {final}. {note}".strip(),
    )
    return item


def questions_to_check(project: Project) -> QuerySet[Item]:
    """Questions in review still without their second answer, oldest first."""
    return Item.objects.filter(AWAITING_CHECK, project=project).order_by("pk")


def next_question_for(project: Project, user) -> Item | None:
    """The next question this annotator may check blind: one whose answer they did not write, not handed to
    anybody else."""
    handed = Assignment.objects.filter(item__project=project, status=Assignment.Status.ACTIVE).exclude(
        annotator=user
    )
    return (
        questions_to_check(project)
        .exclude(answer_author=user)
        .exclude(pk__in=handed.values("item_id"))
        .select_related("group")
        .first()
    )


def check_assignment_held(project: Project, user) -> Assignment | None:
    """The question the check queue handed ``user`` and they have not answered yet."""
    return (
        Assignment.objects.filter(
            annotator=user, status=Assignment.Status.ACTIVE, item__in=questions_to_check(project)
        )
        .select_related("item__group")
        .order_by("pk")
        .first()
    )


@transaction.atomic
def check_assignment_next(*, project: Project, user) -> Assignment | None:
    """Hand ``user`` the next question to check blind (or the one they hold); None when nothing waits."""
    held = check_assignment_held(project, user)
    if held is not None:
        return held
    item = next_question_for(project, user)
    if item is None:
        return None
    assignment, _created = Assignment.objects.update_or_create(
        item=item,
        annotator=user,
        round=item.round,
        defaults={"status": Assignment.Status.ACTIVE, "finished_at": None},
    )
    return assignment


def adjudication_queue(project: Project) -> QuerySet[Item]:
    return (
        Item.objects.filter(project=project, status=Item.Status.IN_REVIEW, metadata__check__status=DISPUTED)
        .select_related("group")
        .order_by("pk")
    )


@dataclass
class CheckReport:
    checked: int = 0
    agreed: int = 0
    disputed: int = 0  # still waiting for a curator
    adjudicated: int = 0
    unchecked: int = 0
    by_checker: dict = field(default_factory=dict)  # "model" / "annotator" → {"checked", "disagreed"}
    balance_by_perspective: dict = field(default_factory=dict)  # perspective → {"yes", "no"}
    balance_by_domain: dict = field(default_factory=dict)  # domain → {"yes", "no"}

    @property
    def disagreed(self) -> int:
        return self.disputed + self.adjudicated

    @property
    def disagreement_rate(self) -> float | None:
        return self.disagreed / self.checked if self.checked else None


def check_report(project: Project) -> CheckReport:
    """How the answer checks went (disagreement rate, by kind of checker) and the yes/no balance of the
    questions not rejected, per perspective and per domain (one query)."""
    report = CheckReport()
    by_checker: dict[str, Counter] = defaultdict(Counter)
    perspective: dict[str, Counter] = {p: Counter() for p in PERSPECTIVES}
    domain: dict[str, Counter] = {d: Counter() for d in DOMAINS}
    rows = (
        Item.objects.filter(project=project, group__kind="scenario")
        .filter(~Q(status=Item.Status.REJECTED))
        .values_list("reference_answer", "causal_class", "metadata")
    )
    for answer, causal_class, metadata in rows:
        metadata = metadata if isinstance(metadata, dict) else {}
        check = metadata.get("check")
        if check:
            report.checked += 1
            status = check.get("status")
            report.agreed += status == AGREED
            report.disputed += status == DISPUTED
            report.adjudicated += status == ADJUDICATED
            by_checker[check.get("by", "")]["checked"] += 1
            by_checker[check.get("by", "")]["disagreed"] += not check.get("agrees")
        else:
            report.unchecked += 1
        clean = normalise_answer(answer)
        if clean:
            perspective.setdefault(causal_class, Counter())[clean] += 1
            domain.setdefault(metadata.get("domain", ""), Counter())[clean] += 1
    report.by_checker = {key: dict(counts) for key, counts in by_checker.items()}
    report.balance_by_perspective = {key: {"yes": c["yes"], "no": c["no"]} for key, c in perspective.items()}
    report.balance_by_domain = {key: {"yes": c["yes"], "no": c["no"]} for key, c in domain.items()}
    return report


# --- export ------------------------------------------------------------------------------------


def export_rows(release, domain: str):
    """The released questions of one domain with CausalBench's columns (see ``causalbench.TEXT_FIELDS`` …)."""
    rows = release.items.order_by("split", "position").values_list("data", flat=True)
    for data in rows:
        record = json.loads(data) if isinstance(data, str) else data
        meta = json.loads(record.get("metadata") or "{}")
        if meta.get("domain") != domain or meta.get("perspective") not in QUESTION_TYPES:
            continue
        common = {
            "Question Type": QUESTION_TYPES[meta["perspective"]],
            "Ground Truth": (record["answer"] or "").capitalize(),
            "Explanation": meta.get("explanation", ""),
        }
        if domain == "text":
            yield {"Scenario and Question": f"{record['context']}\n\n{record['question']}".strip(), **common}
        elif domain == "math":
            yield {"Mathematical Scenario": record["context"], "Question": record["question"], **common}
        else:
            yield {"Code": record["context"], "Question": record["question"], **common}
