"""Run a scan: each attack in a conversation of its own on one agent, at most
`concurrency` at a time, graded as it ends. A multi-turn attack's lead-in turns come
first in the same conversation (`multi_turn.py`); the graders read the answer to its
last message and the calls of every turn.

The agent runs as the surfaces run it (its guardrails, tool rules and policies,
approvals and outbound walls all hold); every call that waits for a person's approval is
denied, as a careful person would. For the offline `test` model each attack says which
tools to call (a real model decides for itself).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

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
    StructuredModel,
    ToolCallFinished,
)
from holodeck.spec.models.agent_spec import AgentSpec
from holodeck.testing.approvals import through_pauses
from holodeck.testing.offline import offline_run
from holodeck.testing.redteam.attacks import PLUGINS, SINGLE, Attack, Targets
from holodeck.testing.redteam.graders import grade
from holodeck.testing.redteam.multi_turn import lead_in, scripted_user
from holodeck.testing.redteam.results import (
    AttackResult,
    AttackTurn,
    PluginSummary,
    Scan,
    Status,
)
from holodeck.testing.redteam.seeding import HOOK, seeding
from holodeck.testing.results import GuardrailRecord, ToolCallRecord, TurnRecord

DEFAULT_CONCURRENCY = 8
DENIED_BY_SCAN = "The red-team scan denies every call that waits for approval."


@dataclass
class ScanOptions:
    """How to scan: the run's options (model, cassette), attacks at once, the seed."""

    run: RunOptions = field(default_factory=RunOptions)
    concurrency: int = DEFAULT_CONCURRENCY
    seed: int = 0
    on_attack: Callable[[AttackResult], None] | None = None  # as each attack ends
    # plays the user of multi-turn attacks (`--attacker-model`); default: their scripts
    attacker: StructuredModel | None = None
    strategies: tuple[str, ...] = (SINGLE,)


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
    user = None
    if any(a.lead_in for a in attacks):  # who plays the user of multi-turn attacks
        user = options.attacker or scripted_user(agent.options, spec.execution)
    results: dict[str, AttackResult] = {}

    async def one(attack: Attack) -> None:
        async with gate:
            result = await _attack(agent, attack, aim.instructions, user)
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
        strategies=list(options.strategies),
        offline=offline_run(spec, options.run),
        started_at=started,
        duration_ms=(time.perf_counter() - clock) * 1000,
        plugins=summaries(ordered, aim, list(dict.fromkeys([a.plugin for a in attacks]))),
        attacks=ordered,
    )


async def _attack(
    agent: Agent, attack: Attack, instructions: str, user: StructuredModel | None
) -> AttackResult:
    clock = time.perf_counter()
    records: list[TurnRecord] = []
    try:
        async with Session(agent) as session:

            def turn(said: str) -> Awaitable[TurnRecord]:
                return _turn(agent, session, said, ())  # the offline model calls nothing

            with seeding(attack.seeded):
                if attack.lead_in:
                    assert user is not None
                    await lead_in(attack, user, turn, records, agent.options.offline)
                records.append(await _turn(agent, session, attack.prompt, attack.calls))
    except (ModelError, InputError, LimitReached) as exc:
        return _result(attack, "error", str(exc), records, clock, final=False)
    calls = [c for r in records for c in r.tool_calls]
    verdict = grade(attack, records[-1].output, calls, instructions)
    status: Status = "fail" if verdict.succeeded else "pass"
    return _result(attack, status, verdict.reason, records, clock, final=True)


async def _turn(
    agent: Agent, session: Session, said: str, calls: tuple[tuple[str, dict[str, Any]], ...]
) -> TurnRecord:
    """One turn of an attack's conversation, every approval denied."""
    clock = time.perf_counter()
    record = TurnRecord(input=said)
    with agent.options.offline.expecting(list(calls)):
        events = session.run(said, stream_text=False)
        async for event in through_pauses(session, events, _deny):
            if isinstance(event, ToolCallFinished):
                record.tool_calls.append(_call(event))
            elif isinstance(event, GuardrailTriggered):
                record.guardrails.append(_guardrail(event))
            elif isinstance(event, FinalMessage):
                record.output = event.text
    record.duration_ms = (time.perf_counter() - clock) * 1000
    return record


def _result(
    attack: Attack,
    status: Status,
    reason: str,
    records: list[TurnRecord],
    clock: float,
    *,
    final: bool,
) -> AttackResult:
    """The attack's result; `final`: the last of `records` is its last message's turn."""
    lead = records[:-1] if final else records
    return AttackResult(
        plugin=attack.plugin,
        id=attack.id,
        severity=attack.severity,
        category=attack.category,
        strategy=attack.strategy,
        lead_in=[AttackTurn(said=r.input, answer=r.output) for r in lead],
        prompt=attack.prompt,
        seeded=attack.seeded,
        status=status,
        reason=reason,
        answer=records[-1].output if final else "",
        tool_calls=[c for r in records for c in r.tool_calls],
        guardrails=[g for r in records for g in r.guardrails],
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
