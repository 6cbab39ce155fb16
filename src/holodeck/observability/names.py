"""Span names and attributes HoloDeck adds to pydantic-ai's GenAI spans."""

from __future__ import annotations

TEST_CASE_SPAN = "test_case"  # `test_case <name>`: one run of a test case
METRIC_SPAN = "evaluate"  # `evaluate <metric>`: one metric of one run
HANDOFF_SPAN = "handoff"  # `handoff <to agent>`: the conversation passed to another agent

CASE_NAME = "holodeck.test.case"
CASE_ATTEMPT = "holodeck.test.attempt"
CASE_STATUS = "holodeck.test.status"
METRIC_NAME = "holodeck.metric.name"
METRIC_SCORE = "holodeck.metric.score"
METRIC_THRESHOLD = "holodeck.metric.threshold"
METRIC_STATUS = "holodeck.metric.status"
METRIC_INPUT = "holodeck.metric.input"
METRIC_OUTPUT = "holodeck.metric.output"
METRIC_EXPECTED = "holodeck.metric.ground_truth"
HANDOFF_FROM = "holodeck.handoff.from_agent"
HANDOFF_TO = "holodeck.handoff.to_agent"
HANDOFF_REASON = "holodeck.handoff.reason"  # the handing agent's, when it gave one
HANDOFF_BACK = "holodeck.handoff.back"  # returned to the agent that had handed it over
OPERATION = "gen_ai.operation.name"
COST_USD = "holodeck.cost_usd"  # what a served turn's or a test case's model requests cost
