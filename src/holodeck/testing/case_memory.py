"""A case's long-term memories: the facts its user has before it (`memories:`) and what
must be remembered after it (`expected_memories:`).

A case that sets either, or whose simulated user comes back in several `sessions`, runs
as a user of its own (`test-<case>-<id>`), so cases running at once never read each
other's memories nor the person's own (`local`); that user's memories are deleted when
the case ends, with the collection that held them (`MemoryBank.drop_user`). Its memories
are read and written through a `MemoryBank` of its own on the agent's store, which the
agent's bank sees (the stores notice other writers)."""

from __future__ import annotations

import re
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

from holodeck import memory as long_term_memory  # its bank loads the search stores when used
from holodeck.memory import MemoryOwner
from holodeck.runtime import Session, tool_context
from holodeck.spec.models.cases import ExpectedMemories, MemoryPattern, SeededMemory, TestCase
from holodeck.testing.results import CaseRun, MemoryCheck

if TYPE_CHECKING:
    from holodeck.memory import MemoryBank


def uses_memory(case: TestCase) -> bool:
    """Whether `case` seeds, checks or spans sessions of long-term memory."""
    sessions = case.simulate is not None and case.simulate.sessions is not None
    return case.memories is not None or case.expected_memories is not None or sessions


@dataclass
class CaseMemory:
    """The bank and user a case's memories are read and written as."""

    bank: MemoryBank
    user: str

    async def seed(self, session: Session, facts: list[str | SeededMemory]) -> None:
        owner = MemoryOwner(self.user, session.id)
        entries = [f if isinstance(f, str) else (f.id, f.text) for f in facts]
        await self.bank.remember_many(owner, entries)

    async def check(self, expected: ExpectedMemories) -> MemoryCheck:
        texts = [m.text for m in await self.bank.memories(self.user)]
        problems = [f"no memory {_said(p)}" for p in expected.contains if not _any(p, texts)] + [
            f"a memory {_said(p)}: {found}"
            for p in expected.not_contains
            if (found := _first(p, texts)) is not None
        ]
        checked = len(expected.contains) + len(expected.not_contains)
        return MemoryCheck(
            passed=not problems, checked=checked, problems=problems, remembered=texts
        )


def memory_problem(session: Session, case: TestCase, name: str) -> str | None:
    """Why the agent cannot serve `case`'s memories (None: it can, or none are used)."""
    if not uses_memory(case):
        return None
    long_term = session.agent.spec.memory.long_term
    if long_term is None:
        return (
            f"test case {name!r} sets `memories`, `expected_memories` or simulated "
            "`sessions`, but the agent has no long-term memory (add "
            "`memory: {long_term: {}}` to the agent, or remove those keys)"
        )
    if long_term.scope == "agent":
        return (
            f"test case {name!r} sets memories of its user, but the agent's memories are "
            "shared by every user (memory.long_term.scope: agent): test with `scope: user` "
            "(or `session`), or remove the case's memory keys"
        )
    return None


@asynccontextmanager
async def case_memory(
    session: Session, case: TestCase, name: str
) -> AsyncIterator[CaseMemory | None]:
    """`session` turned to a user of the case's own, with `case.memories` kept for it,
    while the block runs; None (and nothing changed) for a case that uses no memory.
    Check `memory_problem` first."""
    if not uses_memory(case):
        yield None
        return
    spec = session.agent.spec
    bank = long_term_memory.open_bank(
        spec, tool_context(spec, session.agent.options, session.agent.hosting)
    )
    assert bank is not None
    user = f"test-{_slug(name)}-{uuid.uuid4().hex[:8]}"
    session.user = user
    async with bank:
        memory = CaseMemory(bank, user)
        try:
            await memory.seed(session, list(case.memories or []))
            yield memory
        finally:
            await bank.drop_user(user)


async def remembering(
    session: Session,
    named: tuple[str, TestCase],
    attempt: int,
    run: Callable[[], Awaitable[CaseRun]],
) -> CaseRun:
    """`run` of a case within its memories (`case_memory`), checked against its
    `expected_memories` when it ran to the end: a memory not as expected fails a run that
    had passed. A case the agent's memory cannot serve is an ERROR saying why."""
    name, case = named
    problem = memory_problem(session, case, name)
    if problem is not None:
        return CaseRun(attempt=attempt, status="error", error=problem)
    async with case_memory(session, case, name) as memory:
        done = await run()
        expected = case.expected_memories
        if memory is None or expected is None or done.status == "error":
            return done
        check = await memory.check(expected)
    status = "fail" if done.status == "pass" and not check.passed else done.status
    return done.model_copy(update={"memory_check": check, "status": status})


def _slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-")[:40] or "case"


def _said(pattern: MemoryPattern) -> str:
    if isinstance(pattern, str):
        return f"contains {pattern!r}"
    return f"matches /{pattern.regex}/"


def _folded(text: str) -> str:
    return " ".join(text.casefold().split()).rstrip(".")


def _matches(pattern: MemoryPattern, text: str) -> bool:
    if isinstance(pattern, str):
        return _folded(pattern) in _folded(text)
    return re.search(pattern.regex, text) is not None


def _first(pattern: MemoryPattern, texts: list[str]) -> str | None:
    return next((t for t in texts if _matches(pattern, t)), None)


def _any(pattern: MemoryPattern, texts: list[str]) -> bool:
    return _first(pattern, texts) is not None
