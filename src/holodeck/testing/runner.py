"""Run an agent's test cases: each case (and each repeat) in its own conversation, at
most `concurrency` at a time, then check its tool calls and score it with metrics."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from decimal import Decimal
from functools import partial
from typing import Any

from holodeck.errors import InputError, LimitReached, ModelError
from holodeck.runtime import (
    Agent,
    ExpectedCall,
    FinalMessage,
    GuardrailTriggered,
    HandedOff,
    Hosting,
    OfflineScript,
    Run,
    RunOptions,
    Session,
    ToolCallFinished,
    ToolCallStarted,
)
from holodeck.spec.models.agent_spec import AgentSpec
from holodeck.spec.models.cases import MATCHER_KEYS, ExpectedTool, TestCase, Turn
from holodeck.testing.approvals import Decide, case_decisions, through_pauses
from holodeck.testing.case_files import CaseFiles
from holodeck.testing.case_memory import remembering
from holodeck.testing.case_outcome import jsonable, merged, own_calls, retrieved, summarised
from holodeck.testing.case_workspace import case_workspace, check_files
from holodeck.testing.handoff_calls import handoff_record, transfer_call
from holodeck.testing.metrics import JudgeFactory
from holodeck.testing.metrics.nlp_extra import require_nlp_extra
from holodeck.testing.offline import OFFLINE, not_judged, offline_run
from holodeck.testing.results import (
    CaseResult,
    CaseRun,
    FileCheck,
    GuardrailRecord,
    HandoffRecord,
    RunSummary,
    TestRun,
    ToolCallRecord,
    ToolCheck,
    TurnRecord,
)
from holodeck.testing.shards import Shard
from holodeck.testing.simulation import case_goal, session_checks, simulate
from holodeck.testing.tool_check import check_tools
from holodeck.testing.traced import traced_case
from holodeck.testing.turn_scoring import score_case

DEFAULT_CONCURRENCY = 8
INTERRUPT_GRACE_S = 2.0


@dataclass
class TestOptions:
    """How to run: which cases, how many at once, how often, with which model."""

    __test__ = False

    run: RunOptions = field(default_factory=RunOptions)
    hosting: Hosting = field(default_factory=Hosting)  # how the surface listens (progress)
    names: Sequence[str] = ()  # --case: exact names
    keyword: str | None = None  # -k: a substring of the name or input (a simulated goal)
    # None: the agent's `execution.parallel_test_cases`, else DEFAULT_CONCURRENCY
    concurrency: int | None = None
    repeat: int = 1
    shard: Shard | None = None  # --shard: this slice of the selected cases
    on_case: Callable[[CaseResult], None] | None = None  # called as each case finishes


def select_cases(spec: AgentSpec, options: TestOptions) -> list[tuple[str, TestCase]]:
    chosen = []
    for index, case in enumerate(spec.test_cases, start=1):
        name = case.name or f"case {index}"
        if options.names and name not in options.names:
            continue
        text = f"{name} {case.input or case_goal(case)}".casefold()
        if options.keyword and options.keyword.casefold() not in text:
            continue
        chosen.append((name, case))
    return options.shard.take(chosen) if options.shard else chosen


def concurrency_for(spec: AgentSpec, options: TestOptions) -> int:
    """Cases at once: --concurrency, else the agent's (or config.yaml's) setting."""
    chosen = options.concurrency or spec.execution.parallel_test_cases or DEFAULT_CONCURRENCY
    return max(1, chosen)


def agent_for_tests(spec: AgentSpec, options: TestOptions, telemetry: Any = None) -> Agent:
    """The agent every case runs on. Built once: definition and key problems surface
    before any case runs, and every case shares its tools (MCP servers start once) in a
    conversation of its own. One cassette for the whole run: every case and every judge
    records into it. `telemetry` replaces the agent's own (`--trace`)."""
    hosting = replace(options.hosting, signals_first_request=True)
    return Agent(spec, options.run, telemetry=telemetry, hosting=hosting)


async def run_tests(spec: AgentSpec, options: TestOptions, agent: Agent | None = None) -> TestRun:
    """Run the selected cases; on cancellation (Ctrl+C) return what finished, marked so.

    With `agent` (from `agent_for_tests`), the caller's `Run` owns it; otherwise one is made
    here and a `Run` of its own opens and closes it (`holodeck test optimize`)."""
    require_nlp_extra(spec, (case for _, case in select_cases(spec, options)))
    if agent is None:
        own = agent_for_tests(spec, options)
        async with Run(own):
            await own.start()  # servers start once, before the cases, as the CLI's do
            return await run_tests(spec, options, own)

    run_options = agent.options
    offline = offline_run(spec, run_options)
    # an offline run's judges are the offline model too, whatever the metrics name: no
    # provider (and no key) is needed for a smoke run
    judge_options = replace(run_options, model=OFFLINE) if offline else run_options
    judges = JudgeFactory(spec, spec.evaluations, judge_options)
    judges.telemetry = agent.telemetry  # judges' model calls nest under their metric's span
    files = CaseFiles(spec)
    cases = select_cases(spec, options)
    started, clock = datetime.now(UTC), time.perf_counter()
    concurrency = concurrency_for(spec, options)
    gate = asyncio.Semaphore(concurrency)
    # One case at a time from its start to its first model request (when the agent says
    # when that is): requests leave one after another rather than together once every
    # waiting case has done its CPU work, and their answers come back spread out, so a
    # case rarely waits for the others' work. Not when each case starts servers of its
    # own (`scope: session`) before that request: those start together.
    staggered = agent.hosting.signals_first_request and not agent.has_session_tools
    preparing = asyncio.Lock() if staggered else None
    results: dict[str, CaseResult] = {}

    async def one_case(name: str, case: TestCase) -> None:
        runs = []
        for attempt in range(1, options.repeat + 1):
            async with gate:
                with case_workspace(spec, case) as folder:  # each run starts afresh
                    async with (
                        _until_first_request(preparing, run_options.offline),
                        # through agent.session() unless the case has a workspace of
                        # its own (a session given its folder)
                        (
                            agent.session() if folder is None else Session(agent, workspace=folder)
                        ) as session,
                    ):
                        run = remembering(  # a case's own user, its memories checked
                            session,
                            (name, case),
                            attempt,
                            partial(
                                _run_case,
                                session,
                                spec,
                                (name, case),
                                judges,
                                files,
                                attempt,
                                offline,
                            ),
                        )
                        done = await traced_case(
                            agent.telemetry, name, attempt, _priced(run, session)
                        )
                    # checked once the session (its terminals) has closed
                    if folder is not None and case.expected_files is not None:
                        done = _with_files(done, check_files(folder, case.expected_files))
            runs.append(done)
        result = summarised(name, case, runs)
        results[name] = result
        if options.on_case is not None:
            options.on_case(result)

    tasks = [asyncio.create_task(one_case(name, case)) for name, case in cases]
    interrupted = False
    try:
        await asyncio.gather(*tasks)
    except asyncio.CancelledError:
        interrupted = True
        for task in tasks:
            task.cancel()
        # cases end at once (a tool running in a thread is abandoned); one that does not
        # within the grace is reported as unfinished rather than waited for
        await asyncio.wait(tasks, timeout=INTERRUPT_GRACE_S)
    ordered = [results[name] for name, _ in cases if name in results]
    return TestRun(
        run_id=datetime.now(UTC).strftime("%Y%m%d-%H%M%S-") + uuid.uuid4().hex[:6],
        agent=spec.name,
        source=str(spec.source),
        model=_model_label(spec, run_options),
        prompt_version=spec.prompt_version.version if spec.prompt_version else None,
        prompt_tags=list(spec.prompt_version.tags) if spec.prompt_version else [],
        started_at=started,
        concurrency=concurrency,
        repeat=options.repeat,
        interrupted=interrupted,
        offline=offline,
        shard=str(options.shard) if options.shard else None,
        cases=ordered,
        summary=RunSummary.of(ordered, (time.perf_counter() - clock) * 1000),
    )


async def _priced(run: Awaitable[CaseRun], session: Session) -> CaseRun:
    """`run`, with what its session spent as its cost, set before the case's span ends so
    that the span carries it too."""
    done = await run
    spent = session.spend
    done.cost_usd = spent.cost if spent.usage.requests else Decimal(0)
    return done


async def _run_case(
    session: Session,
    spec: AgentSpec,
    named: tuple[str, TestCase],
    judges: Any,
    files: CaseFiles,
    attempt: int,
    offline: bool,
) -> CaseRun:
    name, case = named
    clock = time.perf_counter()
    turns = list(case.turns or [])  # a simulated user's turns are made as it talks
    if case.input is not None:
        turns = [
            Turn(
                input=case.input,
                ground_truth=case.ground_truth,
                expected_tools=case.expected_tools,
                files=case.files,
            )
        ]
    records: list[TurnRecord] = []
    checks: list[ToolCheck] = []
    simulation = None
    decide = case_decisions(case.approve, case.deny)
    try:
        if case.simulate is not None:  # a model plays the user: the turns are its messages
            sessions = {0: session}  # a user who comes back talks in new sessions

            async def run_turn(
                said: str, expected: Sequence[str | ExpectedTool] | None, number: int
            ) -> TurnRecord:
                if number not in sessions:  # the same user, none of the history
                    sessions[number] = Session(session.agent, spend=session.spend)
                    sessions[number].user = session.user
                said_turn = Turn(input=said, expected_tools=expected)
                record = await _run_turn(sessions[number], files, said_turn, decide)
                record.session = number
                return record

            script = session.agent.options.offline
            try:
                simulation = await simulate(case, judges.user, run_turn, records, script)
            finally:
                for later in list(sessions.values())[1:]:
                    await later.aclose()
        for turn in turns:
            record = await _run_turn(session, files, turn, decide)
            records.append(record)
            if case.turns and turn.expected_tools is not None:
                checks.append(check_tools(turn.expected_tools, own_calls(record), case.tool_order))
    except (ModelError, InputError, LimitReached) as exc:  # a cap: an ERROR naming it
        return CaseRun(
            attempt=attempt,
            status="error",
            turns=records,
            error=str(exc),
            simulation=simulation,
            duration_ms=(time.perf_counter() - clock) * 1000,
        )
    if simulation is not None:
        turns = [Turn(input=record.input) for record in records]
    if case.expected_tools is not None and (case.turns or not checks):
        all_calls = [c for r in records for c in own_calls(r)]
        checks.append(check_tools(case.expected_tools, all_calls, case.tool_order))
    if simulation is not None:  # each session's own, over its turns
        checks += session_checks(case, records)
    tool_check = merged(checks)
    given = case.retrieval_context
    context = list(given) if given is not None else retrieved(records)
    scored = []
    if records:  # a simulated user may stop before saying anything
        scored = await score_case(spec, (name, case), turns, records, context, judges)
    if offline:  # canned answers: scores are shown, but say nothing about quality
        scored = [not_judged(m) for m in scored]
        for record in records:
            record.metrics = [not_judged(m) for m in record.metrics]
    failed = (tool_check is not None and not tool_check.passed) or any(
        m.status != "pass" and m.fails_case for m in scored
    )
    failed = failed or (simulation is not None and simulation.stopped != "goal_met")
    return CaseRun(
        attempt=attempt,
        status="fail" if failed else "pass",
        turns=records,
        tool_check=tool_check,
        metrics=scored,
        retrieval_context=context,
        simulation=simulation,
        duration_ms=(time.perf_counter() - clock) * 1000,
    )


async def _run_turn(session: Session, files: CaseFiles, turn: Turn, decide: Decide) -> TurnRecord:
    clock = time.perf_counter()
    expected = None
    if turn.expected_tools is not None:  # `[]`: an offline turn calls no tool
        expected = [_expected_call(e) for e in turn.expected_tools]
    attachments, added = await files.prepare(turn.files or [])
    prompt = turn.input + added
    order: dict[str, int] = {}  # call id -> when the model made the call
    finished: list[tuple[int, ToolCallRecord]] = []
    final: FinalMessage | None = None
    guarded: list[GuardrailRecord] = []
    handoffs: list[HandoffRecord] = []
    # the answer is only read whole: no text streaming, less work per model request; an
    # offline run's model calls the tools the turn expects (the turn starts in the block)
    with session.agent.options.offline.expecting(expected):
        events = session.run(prompt, attachments=attachments, stream_text=False)
        async for event in through_pauses(session, events, decide):
            if isinstance(event, ToolCallStarted):
                order[event.call_id] = len(order)
            elif isinstance(event, ToolCallFinished):
                record = ToolCallRecord(
                    name=event.name,
                    args=event.args,
                    result=jsonable(event.result),
                    error=event.error,
                    duration_ms=event.duration_ms,
                    agent=event.agent,
                )
                finished.append((order.get(event.call_id, len(order)), record))
            elif isinstance(event, HandedOff):  # a transfer is a call the model made
                handoffs.append(handoff_record(event))
                order[event.call_id] = len(order)
                finished.append((order[event.call_id], transfer_call(event)))
            elif isinstance(event, GuardrailTriggered):
                guarded.append(
                    GuardrailRecord(
                        guardrail=event.guardrail,
                        side=event.side,
                        action=event.action,
                        kind=event.kind,
                        reason=event.reason,
                        agent=event.agent,
                    )
                )
            elif isinstance(event, FinalMessage):
                final = event
    # in the order the calls were made: calls running at once end in any order, and
    # `tool_order` checks the order the agent chose
    calls = [record for _, record in sorted(finished, key=lambda item: item[0])]
    assert final is not None
    return TurnRecord(
        input=turn.input,
        ground_truth=turn.ground_truth,
        output=final.text,
        structured_output=final.output,
        tool_calls=calls,
        input_tokens=final.usage.input_tokens,
        output_tokens=final.usage.output_tokens,
        duration_ms=(time.perf_counter() - clock) * 1000,
        model=final.model,
        guardrails=guarded,
        handoffs=handoffs,
        agent=final.agent if final.agent != session.agent.spec.name else "",
    )


@asynccontextmanager
async def _until_first_request(
    lock: asyncio.Lock | None, script: OfflineScript
) -> AsyncIterator[None]:
    """Hold `lock` until the first model request starts in the block (or it ends): the
    agent's model tells `script`, the run's."""
    if lock is None:
        yield
        return
    await lock.acquire()
    held = True

    def release() -> None:
        nonlocal held
        if held:
            held = False
            lock.release()

    try:
        with script.on_first_request(release):
            yield
    finally:
        release()


def _expected_call(entry: str | ExpectedTool) -> ExpectedCall:
    """What the offline test model should call: the name, with the argument values a
    case pins down (exact values and `approx` targets)."""
    if isinstance(entry, str):
        return entry
    values = {}
    for name, expected in entry.args.items():
        if isinstance(expected, dict) and expected and set(expected) <= MATCHER_KEYS:
            if "equals" in expected:
                values[name] = expected["equals"]
            elif "approx" in expected:
                values[name] = expected["approx"]
        else:
            values[name] = expected
    return (entry.name, values)


def _with_files(run: CaseRun, check: FileCheck) -> CaseRun:
    """`run` with its files checked: a difference fails a run that had passed."""
    status = "fail" if run.status == "pass" and not check.passed else run.status
    return run.model_copy(update={"file_check": check, "status": status})


def _model_label(spec: AgentSpec, options: RunOptions) -> str:
    if isinstance(options.model, str):
        return options.model
    if options.model is not None:
        return options.model.model_name
    if spec.model is None:
        return "(none)"
    return f"{spec.model.provider}/{spec.model.name}" if spec.model.name else spec.model.provider
