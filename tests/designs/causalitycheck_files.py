"""Fixtures in the shapes CausalityCheck publishes: JSON arrays, pretty-printed, some with raw newlines inside
strings (not strict JSON), lower-case keys; the seeds file and test cells of each task."""

import json

CONTEXTS = [
    "A drought dried the reservoir.\nThe town rationed water for a month.",
    "The factory changed its supplier. Its cars then failed the brake test twice.",
]
CHAINS = {
    "correct": "drought → reservoir dries → rationing",
    "corrupted": "rationing → drought → reservoir dries",
}


def seed_record(seed_id: int, **extra) -> dict:
    context = CONTEXTS[(seed_id - 1) % len(CONTEXTS)]
    return {
        "id": seed_id,
        "context": context,
        "question": f"What followed from the first event ({seed_id})?",
        "choice_1": "Nothing changed.",
        "choice_2": "The second event.",
        "choice_3": "A third, unrelated event.",
        "choice_4": "The first event again.",
        "answer": 2,
        **extra,
    }


def array(records: list[dict], raw_newlines: bool = True) -> bytes:
    """Pretty-printed JSON array; with ``raw_newlines`` the escaped newlines inside strings are written raw."""
    text = json.dumps(records, ensure_ascii=False, indent=4)
    return (text.replace("\\n", "\n") if raw_newlines else text).encode("utf-8")


def seeds_file() -> bytes:
    return array([seed_record(1), seed_record(2, source_dataset="COPA")])


def op_cell() -> list[dict]:
    return [seed_record(1), seed_record(2)]


def aj_cell() -> list[dict]:
    rows = []
    for seed_id, answerable in [(1, 1), (1, 0), (2, 1), (2, 0)]:
        row = seed_record(seed_id)
        del row["answer"]
        row["answerable"] = answerable
        if not answerable:
            row["context"] = "The town rationed water for a month."
        rows.append(row)
    return rows


def pj_cell() -> list[dict]:
    """Two rows per seed that share the context and question: one with the correct chain, one corrupted."""
    rows = []
    for seed_id in (1, 2):
        for kind, correctness in (("correct", 1), ("corrupted", 0)):
            rows.append({**seed_record(seed_id), "causal_chain": CHAINS[kind], "correctness": correctness})
    return rows


def dv_cell() -> list[dict]:
    return [{**seed_record(1), "answer": number, "verdict": number} for number in (1, 2, 3, 4)]


CELLS = {"OP": op_cell, "AJ": aj_cell, "PJ": pj_cell, "DV": dv_cell}
