"""Chat's `/save-case NAME [FILE]`: the conversation so far (since the last /reset) made
a test case, as `holodeck test capture` makes one, and added to FILE: by default the
agent's own cases (agent.yaml's `test_cases`, or the file its `test_cases_file` names;
an image's `tests/captured.yaml`), where `holodeck test` runs it from then on."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from holodeck.cli.chat.transcript import Exchange
from holodeck.spec.models.agent_spec import AgentSpec
from holodeck.testing.capture.case import case_from
from holodeck.testing.capture.case_writer import append_cases
from holodeck.testing.capture.conversation import Captured, CapturedCall, CapturedTurn

IMAGE_FILE = Path("tests") / "captured.yaml"


def save_case(spec: AgentSpec, exchanges: Sequence[Exchange], name: str, file: Path | None) -> Path:
    """Add the conversation as case `name` to `file` (default: the agent's cases);
    returns the file written. Raises `InputError` (nothing asked yet, a name taken, a
    file that cannot be written)."""
    captured = captured_chat(exchanges, f"the chat with {spec.name}")
    target = file if file is not None else default_file(spec)
    if spec.format == "image" and file is None and not target.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("test_cases:\n", encoding="utf-8")  # what an image's tests hold
    return append_cases(target, [case_from(captured, name)], f"captured in chat with {spec.name}")


def default_file(spec: AgentSpec) -> Path:
    return spec.root / IMAGE_FILE if spec.format == "image" else spec.source


def captured_chat(exchanges: Sequence[Exchange], origin: str) -> Captured:
    """The answered exchanges since the last reset (cancelled and failed ones were not
    kept in the conversation, so a replay would not see them either)."""
    resets = [i for i, e in enumerate(exchanges) if e.status == "reset"]
    kept = exchanges[resets[-1] + 1 :] if resets else exchanges
    turns = [
        CapturedTurn(
            exchange.prompt,
            [
                CapturedCall(call.name, dict(call.args), call.error is not None)
                for call in exchange.calls
                if not call.agent  # a sub-agent's own calls are not the agent's
            ],
            exchange.answer,
        )
        for exchange in kept
        if exchange.status in ("answered", "resumed")
    ]
    return Captured(origin, turns)
