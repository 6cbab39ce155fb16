"""`OfflineScript`: what the code running a turn tells the offline `test` model, and the
hook that hears a turn's first model request. One object, carried by the run's options
(`RunOptions.offline`) to every model the run builds; the surfaces script it through the
agent they run (`agent.options.offline`), never through a module of `llm/`.

- `expecting(tools)`: the tools the turn started in the block calls (a test case's
  `expected_tools`, chat's `/call` command); its sub-agents go by their own prompts. An
  agent that hands the conversation over leaves the calls it has no tool for to the
  agent taking it (`hand_on`).
- `scripted_user(lines)`: the offline model playing a simulated user says `lines` in
  order, then stops with `goal_met`. The lines never enter a prompt, so the agent under
  test (which the same offline model may play) cannot see them.
- `on_first_request(callback)`: called as the turn's first model request starts
  (`holodeck test` lets one case at a time reach its first request; `testing/runner.py`).

Cases run concurrently on one agent, so what each block sets belongs to the task that
entered it: tasks copy it when created (a turn's tasks, pydantic-ai's graph tasks under
them, a sub-agent's turn inside a tool call) and share its progress.

    >>> script = OfflineScript()
    >>> with script.scripted_user(["Hello", "Thanks"]):
    ...     [script.next_move()["action"] for _ in range(3)]
    ['message', 'message', 'stop']
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, TypeVar

USER_TOOL = "user_turn"  # the tool through which a simulated user gives its next move
# the metadata key on a transfer's result (a handoff): the agent answering from there on
# starts its own part of the turn, and chooses its tools afresh
HANDOFF_MARK = "holodeck_handoff"

# A tool to call, by name, or by name with argument values to use (a test case's
# `expected_tools: [{name: get_weather, args: {city: Paris}}]`).
ExpectedCall = str | tuple[str, dict[str, Any]]
Calls = tuple[tuple[str, dict[str, Any]], ...]

T = TypeVar("T")


@dataclass
class _Expected:
    calls: Calls
    used: bool = False  # the turn's first choice took it: sub-agents go by their prompts


@dataclass
class _Lines:
    lines: tuple[str, ...]
    said: int = 0


@dataclass
class _Hook:
    callback: Callable[[], None] | None


class OfflineScript:
    """The offline model's script for the turns of one run; see the module's docstring."""

    def __init__(self) -> None:
        self._expected: ContextVar[_Expected | None] = ContextVar("expected", default=None)
        self._lines: ContextVar[_Lines | None] = ContextVar("user_lines", default=None)
        self._hook: ContextVar[_Hook | None] = ContextVar("first_request", default=None)

    # -- what the code running a turn says

    @contextmanager
    def expecting(self, tools: Sequence[ExpectedCall] | None) -> Iterator[None]:
        """Within this block the offline model's first choice of tools is `tools`
        (destructive ones too). `None` leaves the choice to the user's words (`/call
        TOOL` in the message)."""
        expected = None
        if tools is not None:
            calls = tuple((t, {}) if isinstance(t, str) else (t[0], dict(t[1])) for t in tools)
            expected = _Expected(calls)
        with _set(self._expected, expected):
            yield

    @contextmanager
    def scripted_user(self, lines: Sequence[str]) -> Iterator[None]:
        """Within this block the offline user says `lines`, one per move, then stops."""
        with _set(self._lines, _Lines(tuple(lines))):
            yield

    @contextmanager
    def on_first_request(self, callback: Callable[[], None]) -> Iterator[None]:
        """Call `callback` when a model request starts in this block. It may be called
        more than once (by each task that copied the block's state): make it idempotent."""
        with _set(self._hook, _Hook(callback)):
            yield

    # -- what the models read

    def take_expected(self) -> Calls | None:
        """The calls the block expects, once: the turn's first choice takes them."""
        expected = self._expected.get()
        if expected is None or expected.used:
            return None
        expected.used = True
        return expected.calls

    def hand_on(self, calls: Calls) -> None:
        """The agent that took the block's calls handed the conversation over: `calls`
        (those it could not make) are the next agent's first choice."""
        expected = self._expected.get()
        if expected is not None:
            expected.calls, expected.used = calls, False

    def next_move(self) -> dict[str, Any]:
        """The offline user's next move, as the arguments of `USER_TOOL`."""
        script = self._lines.get()
        if script is None or script.said >= len(script.lines):
            return {
                "action": "stop",
                "reason": "goal_met",
                "explanation": "the offline user said every line of its plan",
            }
        line = script.lines[script.said]
        script.said += 1
        return {"action": "message", "message": line}

    def first_request(self) -> None:
        """A model request is starting: call the block's callback, if it has not been."""
        hook = self._hook.get()
        if hook is not None and hook.callback is not None:
            callback, hook.callback = hook.callback, None
            callback()


@contextmanager
def _set(variable: ContextVar[T], value: T) -> Iterator[None]:
    token = variable.set(value)
    try:
        yield
    finally:
        variable.reset(token)
