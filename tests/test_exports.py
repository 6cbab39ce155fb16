"""The names a program imports: the front doors, and every package's one export list."""

from __future__ import annotations

from pathlib import Path

from holodeck import RunOptions, load_agent
from holodeck.runtime import ToolContext, tool_context

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def test_a_program_loads_from_the_top_and_takes_the_tool_context_from_the_runtime() -> None:
    spec = load_agent(EXAMPLES / "weather")
    context = tool_context(spec, RunOptions(model="test"))
    assert isinstance(context, ToolContext)
    assert context.model == "test"
