"""One error family: every failure a user can cause is a `HoloDeckError`.

Each error says what went wrong and where (`message`), how to fix it (`hint`), and
which exit code the command line ends with (`exit_code`). The CLI prints them in one
place, without a traceback unless `--debug` is given:

    error: demo already exists and is not empty
    hint: choose another NAME, or pass --force to overwrite the template's files

    >>> error = ConfigurationError("agent.yaml: no model", hint="add `model:`")
    >>> error.exit_code, str(error)
    (2, 'agent.yaml: no model (add `model:`)')
    >>> print(error.render())
    error: agent.yaml: no model
    hint: add `model:`

Errors are grouped by what went wrong, and `MEANINGS` is the one table that says what
each group means on every surface: the command line's exit code, the server's HTTP status
and the API's error `type`. Every error class belongs to one group by inheritance
(tests/project/test_errors.py checks each class), and `meaning_of` reads the table:

    >>> meaning_of(ModelOutputError("the answer was not JSON"))
    Meaning(exit_code=3, status=502, kind='model_error')

This module is the lowest layer: it imports nothing from holodeck.
"""

from __future__ import annotations

from dataclasses import dataclass

EXIT_OK = 0
EXIT_TEST_FAILED = 1
EXIT_CONFIG = 2  # invalid definition, configuration or usage
EXIT_EXECUTION = 3  # execution error
EXIT_INTERRUPTED = 130

__all__ = [
    "EXIT_CONFIG",
    "EXIT_EXECUTION",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_TEST_FAILED",
    "MEANINGS",
    "ApprovalPending",
    "BusyError",
    "ConfigurationError",
    "DefinitionError",
    "ExecutionError",
    "HoloDeckError",
    "InputError",
    "InputRefused",
    "LifecycleError",
    "LimitReached",
    "Meaning",
    "ModelError",
    "ModelOutputError",
    "RequestError",
    "SessionError",
    "StoreError",
    "ToolError",
    "meaning_of",
]


class HoloDeckError(Exception):
    """A failure a user can act on: what and where (`message`), how to fix it (`hint`).

    `exit_code` is the class's default; pass `exit_code=` to override it for one error.
    """

    exit_code: int = EXIT_EXECUTION

    def __init__(
        self, message: str = "", *, hint: str | None = None, exit_code: int | None = None
    ) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint
        if exit_code is not None:
            self.exit_code = exit_code

    def __str__(self) -> str:
        """One line: `message (hint)`, as a diagnostic is written."""
        return f"{self.message} ({self.hint})" if self.hint else self.message

    def render(self) -> str:
        """What the command line prints: `error: <message>`, then `hint: <hint>`."""
        text = f"error: {self.message}"
        if self.hint:
            text += f"\nhint: {self.hint}"
        return text


# --- the user's side: exit 2 ------------------------------------------------------------


class ConfigurationError(HoloDeckError):
    """Settings, the environment, credentials or the command line are wrong (exit 2; a
    server answers 500: its own configuration is at fault, not the client)."""

    exit_code = EXIT_CONFIG


class DefinitionError(ConfigurationError):
    """An agent's definition (agent.yaml, an image, a file or tool it names) is invalid
    (exit 2; 422 for a definition sent to a server)."""


class InputError(ConfigurationError):
    """What a user handed a command or a turn cannot be used: a file, a session file, an
    attachment of a kind the agent does not take (exit 2; 422)."""


class RequestError(ConfigurationError):
    """An HTTP request the server refuses (its status says why)."""


class InputRefused(InputError):
    """An attachment has a modality the agent does not declare."""


class LifecycleError(ConfigurationError):
    """A program embedding HoloDeck used an agent or a run out of turn: opened it while
    it was open, or used it on an event loop other than the one it runs on (exit 2; 500:
    the server's own code is at fault, not the client)."""


# --- running: exit 3 ---------------------------------------------------------------------


class ExecutionError(HoloDeckError):
    """Running the agent, a tool or a metric failed (exit 3; 500)."""

    exit_code = EXIT_EXECUTION


class ModelError(ExecutionError):
    """The model, or its provider, failed: a refused key, a rate limit, an unusable
    answer, no answer within the tool-iteration limit (exit 3; 502)."""


class ModelOutputError(ModelError):
    """The model's answers could not finish the turn (unusable output, or the
    tool-iteration limit reached)."""


class LimitReached(ExecutionError):
    """A spend cap (`limits:`) ended the turn: its cost, tokens, model requests or tool
    calls reached the cap of the turn, the session or the API key's day (exit 3; 429:
    nothing more is spent until the session or the day is new). `cap` names it, e.g.
    `limits.session.max_cost_usd`; the turn's messages are not kept."""

    def __init__(self, message: str = "", *, cap: str = "", hint: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.cap = cap
        self.spent: object = None  # what the stopped turn used (the runtime's count)


class ToolError(ExecutionError):
    """A tool, or the server or process that runs it, failed (exit 3; 500)."""


class SessionError(ExecutionError):
    """A saved conversation cannot be read (exit 3; 500)."""


class StoreError(ExecutionError):
    """A session store cannot be reached or used (exit 3; 503: try again)."""


class BusyError(ExecutionError):
    """The session is answering another turn (exit 3; 409: try again)."""


class ApprovalPending(BusyError):
    """The session's last turn is paused on tool calls waiting for approval: decide them
    before the next message (exit 3; 409)."""


@dataclass(frozen=True)
class Meaning:
    exit_code: int  # what `holodeck` exits with
    status: int  # the server's HTTP status
    kind: str  # the API's error `type`


MEANINGS: dict[type[HoloDeckError], Meaning] = {
    HoloDeckError: Meaning(EXIT_EXECUTION, 500, "failed"),
    ConfigurationError: Meaning(EXIT_CONFIG, 500, "misconfigured"),
    DefinitionError: Meaning(EXIT_CONFIG, 422, "invalid_agent"),
    InputError: Meaning(EXIT_CONFIG, 422, "invalid_input"),
    RequestError: Meaning(EXIT_CONFIG, 400, "invalid_request"),
    InputRefused: Meaning(EXIT_CONFIG, 422, "input_refused"),
    LifecycleError: Meaning(EXIT_CONFIG, 500, "misused"),
    ExecutionError: Meaning(EXIT_EXECUTION, 500, "turn_failed"),
    ModelError: Meaning(EXIT_EXECUTION, 502, "model_error"),
    LimitReached: Meaning(EXIT_EXECUTION, 429, "limit_reached"),
    ToolError: Meaning(EXIT_EXECUTION, 500, "tool_failed"),
    SessionError: Meaning(EXIT_EXECUTION, 500, "session_damaged"),
    StoreError: Meaning(EXIT_EXECUTION, 503, "store_unavailable"),
    BusyError: Meaning(EXIT_EXECUTION, 409, "session_busy"),
    ApprovalPending: Meaning(EXIT_EXECUTION, 409, "approval_pending"),
}


def meaning_of(error: HoloDeckError) -> Meaning:
    """The table's row for `error`'s group (its nearest class in `MEANINGS`), with the
    exit code it was given if it was given one."""
    for cls in type(error).__mro__:
        if cls in MEANINGS:
            meaning = MEANINGS[cls]
            if error.exit_code != meaning.exit_code:
                return Meaning(error.exit_code, meaning.status, meaning.kind)
            return meaning
    raise AssertionError(f"{type(error).__name__} is not a HoloDeckError")  # unreachable
