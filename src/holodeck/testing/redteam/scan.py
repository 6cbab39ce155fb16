"""Run a scan: each attack in a conversation of its own on one agent, at most
`concurrency` at a time, graded as it ends.

The agent runs as the surfaces run it (its guardrails, tool rules and policies,
approvals and outbound walls all hold); every call that waits for a person's approval is
denied, as a careful person would. For the offline `test` model each attack says which
tools to call (a real model decides for itself).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from pydantic_core import to_jsonable_python

from holodeck.errors import InputError, LimitReached, ModelError
from holodeck.runtime import (
    Agent,
    ApprovalRequired,
    Decision,
    FinalMessage,
    GuardrailTriggered,
    Hosting,
    Run,
    RunOptions,
    Session,
    ToolCallFinished,
)
from holodeck.spec.models.agent_spec import AgentSpec
from holodeck.testing.approvals import through_pauses
from holodeck.testing.offline import offline_run
from holodeck.testing.redteam.attacks import PLUGINS, Attack, Targets
from holodeck.testing.redteam.graders import grade
from holodeck.testing.redteam.results import AttackResult, PluginSummary, Scan, Status
from holodeck.testing.redteam.seeding import HOOK, seeding
from holodeck.testing.results import GuardrailRecord, ToolCallRecord

DEFAULT_CONCURRENCY = 8
DENIED_BY_SCAN = "The red-team scan denies every call that waits for approval."


@dataclass
class ScanOptions:
    """How to scan: the run's options (model, cassette), attacks at once, the seed."""

    run: RunOptions = field(default_factory=RunOptions)
    concurrency: int = DEFAULT_CONCURRENCY
    seed: int = 0
    on_attack: Callable[[AttackResult], None] | None = None  # as each attack ends


def attacked_spec(spec: AgentSpec, attacks: list[Attack]) -> AgentSpec:
    """`spec` with the middleware that seeds tool results, when an attack seeds any."""
    if not any(a.seeded for a in attacks):
        return spec
    return spec.model_copy(update={"middleware": (*spec.middleware, HOOK)})


def _deny(call: ApprovalRequired) -> Decision:
    return Decision(False, DENIED_BY_SCAN)


async def run_scan(
    spec: AgentSpec, attacks: list[Attack], aim: Targets, options: ScanOptions
) -> Scan:
    """Run `attacks` on the agent of `spec` and grade them."""
    started, clock = datetime.now(UTC), time.perf_counter()
    agent = Agent(attacked_spec(spec, attacks), options.run, hosting=Hosting())
    gate = asyncio.Semaphore(max(1, options.concurrency))
    results: dict[str, AttackResult] = {}

    async def one(attack: Attack) -> None:
        async with gate:
            result = await _attack(agent, attack, aim.instructions)
        results[attack.id] = result
        if options.on_attack is not None:
            options.on_attack(result)

    async with Run(agent):
        await asyncio.gather(*(one(a) for a in attacks))
    ordered = [results[a.id] for a in attacks]
    return Scan(
        agent=spec.name,
        source=str(spec.source),
        model=_model_label(spec, options.run),
        seed=options.seed,
        offline=offline_run(spec, options.run),
        started_at=started,
        duration_ms=(time.perf_counter() - clock) * 1000,
        plugins=summaries(ordered, aim, list(dict.fromkeys([a.plugin for a in attacks]))),
        attacks=ordered,
    )


async def _attack(agent: Agent, attack: Attack, instructions: str) -> AttackResult:
    clock = time.perf_counter()
    calls: list[ToolCallRecord] = []
    guarded: list[GuardrailRecord] = []
    final: FinalMessage | None = None
    try:
        async with Session(agent) as session:
            with agent.options.offline.expecting(list(attack.calls)), seeding(attack.seeded):
                events = session.run(attack.prompt, stream_text=False)
                async for event in through_pauses(session, events, _deny):
                    if isinstance(event, ToolCallFinished):
                        calls.append(_call(event))
                    elif isinstance(event, GuardrailTriggered):
                        guarded.append(_guardrail(event))
                    elif isinstance(event, FinalMessage):
                        final = event
    except (ModelError, InputError, LimitReached) as exc:
        return _result(attack, "error", str(exc), "", calls, guarded, clock)
    answer = final.text if final is not None else ""
    verdict = grade(attack, answer, calls, instructions)
    status: Status = "fail" if verdict.succeeded else "pass"
    return _result(attack, status, verdict.reason, answer, calls, guarded, clock)


def _result(
    attack: Attack,
    status: Status,
    reason: str,
    answer: str,
    calls: list[ToolCallRecord],
    guarded: list[GuardrailRecord],
    clock: float,
) -> AttackResult:
    return AttackResult(
        plugin=attack.plugin,
        id=attack.id,
        severity=attack.severity,
        category=attack.category,
        prompt=attack.prompt,
        seeded=attack.seeded,
        status=status,
        reason=reason,
        answer=answer,
        tool_calls=calls,
        guardrails=guarded,
        duration_ms=(time.perf_counter() - clock) * 1000,
    )


def _call(event: ToolCallFinished) -> ToolCallRecord:
    try:
        result = to_jsonable_python(event.result, fallback=str)
    except (TypeError, ValueError):
        result = str(event.result)
    return ToolCallRecord(
        name=event.name,
        args=event.args,
        result=result,
        error=event.error,
        duration_ms=event.duration_ms,
        agent=event.agent,
    )


def _guardrail(event: GuardrailTriggered) -> GuardrailRecord:
    return GuardrailRecord(
        guardrail=event.guardrail,
        side=event.side,
        action=event.action,
        kind=event.kind,
        reason=event.reason,
        agent=event.agent,
    )


def summaries(results: list[AttackResult], aim: Targets, ran: list[str]) -> list[PluginSummary]:
    """A line per plugin that ran or was skipped, in the plugins' order."""
    out = []
    for plugin in PLUGINS:
        if plugin not in ran and plugin not in aim.skipped:
            continue
        mine = [r for r in results if r.plugin == plugin]
        out.append(
            PluginSummary(
                plugin=plugin,
                severity=mine[0].severity if mine else "-",
                attacks=len(mine),
                passed=sum(r.status == "pass" for r in mine),
                failed=sum(r.status == "fail" for r in mine),
                errors=sum(r.status == "error" for r in mine),
                skipped=aim.skipped.get(plugin),
            )
        )
    return out


def _model_label(spec: AgentSpec, options: RunOptions) -> str:
    if isinstance(options.model, str):
        return options.model
    if spec.model is None:
        return "(none)"
    return f"{spec.model.provider}/{spec.model.name}" if spec.model.name else spec.model.provider
