"""Which answers of a case are scored, and with which metrics.

A case's final answer is scored with the case's metrics (its `evaluations`, else the
agent's), against the whole conversation: every tool call, the case's retrieval context.
In a multi-turn case, a turn that has its own `evaluations`, a `ground_truth` or a
`turn_config` is scored on its own instead: its input and answer, its tool calls, its
`retrieval_context` (else what its tools returned), its `turn_config` for code graders,
with its own `evaluations`, else the case's metrics. The last turn is always scored. Each
turn's results stay on the turn, and the case's results are their roll-up, one per metric:
the mean score, failed when a turn failed.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from holodeck.spec.models.agent_spec import AgentSpec
from holodeck.spec.models.cases import TestCase, Turn
from holodeck.spec.models.evaluations import Metric
from holodeck.testing.metrics.sample import Sample
from holodeck.testing.results import MetricResult, TurnRecord
from holodeck.testing.traced import traced_metrics


async def score_case(
    spec: AgentSpec,
    named: tuple[str, TestCase],
    turns: Sequence[Turn],
    records: list[TurnRecord],
    context: list[str],
    judges: Any,
) -> list[MetricResult]:
    """The case's metric results; per-turn results are set on `records`."""
    name, case = named
    default: list[Metric] = list(
        case.evaluations or (spec.evaluations.metrics if spec.evaluations else [])
    )
    own = [
        i
        for i, turn in enumerate(turns)
        if case.turns and (turn.evaluations or turn.ground_truth or turn.turn_config)
    ]
    last = len(turns) - 1
    if not own or (own == [last] and not turns[last].evaluations and not turns[last].turn_config):
        sample = Sample(
            input=turns[last].input,
            output=records[-1].output,
            ground_truth=turns[last].ground_truth or case.ground_truth,
            retrieval_context=context,
            tool_calls=[c for r in records for c in r.tool_calls],
            structured_output=records[-1].structured_output,
            turn_index=last,
            case_name=name,
            turn_config=dict(turns[last].turn_config or {}),
            conversation=tuple(records),
            goal=case.simulate.goal if case.simulate is not None else None,
        )
        return await traced_metrics(default, sample, judges) if default else []
    if last not in own:
        own.append(last)
    for index in own:
        turn, record = turns[index], records[index]
        metrics = list(turn.evaluations or default)
        if not metrics:
            continue
        given = turn.retrieval_context
        if given is None and index == last:
            given = case.retrieval_context
        sample = Sample(
            input=turn.input,
            output=record.output,
            ground_truth=turn.ground_truth or (case.ground_truth if index == last else None),
            retrieval_context=list(given) if given is not None else _results(record),
            tool_calls=list(record.tool_calls),
            structured_output=record.structured_output,
            turn_index=index,
            case_name=name,
            turn_config=dict(turn.turn_config or {}),
            conversation=tuple(records[: index + 1]),
        )
        record.metrics = await traced_metrics(metrics, sample, judges)
    return rolled_up(records)


def rolled_up(records: Sequence[TurnRecord]) -> list[MetricResult]:
    """One result per metric name over the turns that ran it: the mean score; `fail`
    when a turn failed it, else `error` when a turn could not compute it."""
    by_name: dict[str, list[tuple[int, MetricResult]]] = {}
    for index, record in enumerate(records):
        for result in record.metrics:
            by_name.setdefault(result.name, []).append((index, result))
    out = []
    for name, results in by_name.items():
        scores = [r.score for _, r in results if r.score is not None]
        statuses = {r.status for _, r in results}
        status = "fail" if "fail" in statuses else "error" if "error" in statuses else "pass"
        notes = [
            f"turn {index + 1}: {r.status}"
            + (f" ({note})" if (note := r.error or r.reason) else "")
            for index, r in results
            if r.status != "pass"
        ]
        first = results[0][1]
        out.append(
            first.model_copy(
                update={
                    "name": name,
                    "score": sum(scores) / len(scores) if scores else None,
                    "status": status,
                    "reason": "; ".join(notes) or f"passed on {len(results)} turn(s)",
                    "error": None,
                    "fails_case": any(r.fails_case for _, r in results if r.status != "pass"),
                    "judged": all(r.judged for _, r in results),
                    "duration_ms": sum(r.duration_ms for _, r in results),
                }
            )
        )
    return out


def _results(record: TurnRecord) -> list[str]:
    """What the turn's own tool calls returned (failed calls left out)."""
    chunks = []
    for call in record.tool_calls:
        if call.agent or call.error is not None or call.result is None:
            continue
        result = call.result
        chunk = result if isinstance(result, str) else json.dumps(result, default=str)
        if chunk.strip():
            chunks.append(chunk)
    return chunks
