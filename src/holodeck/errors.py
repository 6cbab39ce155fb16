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

This module is the lowest layer: it imports nothing from holodeck.
"""

from __future__ import annotations

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
    "ConfigurationError",
    "ExecutionError",
    "HoloDeckError",
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


class ConfigurationError(HoloDeckError):
    """The definition, configuration or command line is invalid (exit 2)."""

    exit_code = EXIT_CONFIG


class ExecutionError(HoloDeckError):
    """Running the agent, a tool or a metric failed (exit 3)."""

    exit_code = EXIT_EXECUTION
