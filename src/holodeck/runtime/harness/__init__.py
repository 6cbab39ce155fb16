"""Harnesses: an agent whose model loop runs inside another agent product. The Claude
Agent SDK harness drives the Claude Code CLI (a separate process) and is offered to
HoloDeck's runtime as a pydantic-ai model whose one "response" is the CLI's whole turn:
its text streams as the answer, the CLI's own tool calls are reported as HoloDeck tool
calls, and HoloDeck's tools reach the CLI through an in-process MCP server. Sessions,
limits, traces, chat, test and deploy therefore consume it unchanged.

`choose_harness` decides whether an agent runs in a harness for this run, and
`harness_model` builds its model (the SDK itself is imported only when a turn runs)."""

from holodeck.runtime.harness._build import harness_model
from holodeck.runtime.harness._choice import check_harnesses, choose_harness

__all__ = ["check_harnesses", "choose_harness", "harness_model"]
