"""Conversation metrics: a judge scores a whole conversation (a simulated user's, or a
case's turns), 0-1.

- `goal_completion`: did the agent achieve the simulated user's goal?
- `knowledge_retention`: did it keep what the user said earlier (no asking again, no
  contradicting it), in later sessions of a simulated user too (`sessions:`)?
- `role_adherence`: did it stay in the role its instructions give?
- `conversation_completeness`: did it address everything the user asked for?
- `turn_relevancy`: each answer judged against its turn (with the conversation before it);
  the score is the mean, and the reason names the worst turn.

The judge sees the conversation turn by turn: the user's message, the agent's tool calls
(name, arguments, a shortened result) and its answer.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING

from holodeck.testing.metrics.judge import (
    JUDGE_TOOL,
    PREAMBLE,
    UNIT,
    JudgeFactory,
    JudgeRequest,
    judge,
)
from holodeck.testing.metrics.sample import Outcome, Sample
from holodeck.testing.results import MetricResult, TurnRecord

if TYPE_CHECKING:
    from holodeck.spec.models.evaluations import ConversationMetric

RESULT_CHARS = 400  # of each tool result the judge sees
# between the sessions of a user who came back: the agent has only its long-term memory
NEW_SESSION = "[a new session of the same user: the earlier history is gone]"

TASKS = {
    "goal_completion": "Rate how fully the agent achieved the user's goal (in <goal>) by the "
    "end of the conversation: 1 when it did what the user wanted or gave what they needed, "
    "0 when it did not achieve it at all, in between for a partial result. Judge what the "
    "agent did (its tool calls count), not what it promised.",
    "knowledge_retention": "Rate how well the agent kept what the user told it earlier in "
    "the conversation: 1 when it never asks again for something the user already gave, "
    "never contradicts or forgets it; lower for each lapse, 0 when it keeps nothing. "
    "Across sessions, what the agent remembers is what it kept from the earlier ones.",
    "role_adherence": "Rate how consistently the agent stays in the role its instructions "
    "(in <role>) give it, in every answer: its persona, scope, tone and rules. 1 when every "
    "answer fits the role, lower for each answer that leaves it, 0 when it ignores it.",
    "conversation_completeness": "Rate how completely the agent addressed what the user "
    "asked for over the whole conversation: 1 when every request and question was "
    "answered or acted on, lower for each one left unanswered, 0 when none was.",
    "turn_relevancy": "Rate how relevant the agent's answer in the last turn of the "
    "conversation is to the user's message in that turn, given the conversation before it: "
    "1 when it addresses that message directly, 0 when it is beside the point.",
}


async def evaluate_conversation(
    metric: ConversationMetric, sample: Sample, judges: JudgeFactory
) -> MetricResult:
    name = metric.metric
    outcome = Outcome(name, "conversation", metric.threshold, metric.fail_on_error)
    turns = _turns(sample)
    extra, given = "", ""
    if name == "goal_completion":
        if not sample.goal:
            return outcome.error(
                "goal_completion needs a simulated user's goal: write the case with `simulate:`"
            )
        extra, given = f"<goal>\n{sample.goal}\n</goal>\n\n", "goal"
    if name == "role_adherence":
        role = (judges.spec.instructions or "").strip()
        if not role:
            return outcome.error("role_adherence needs the agent's instructions (its role)")
        extra, given = f"<role>\n{role}\n</role>\n\n", "role"
    if name == "turn_relevancy":
        return await _turn_relevancy(metric, turns, judges)
    return await judge(
        JudgeRequest(
            outcome,
            metric.model,
            _instructions(TASKS[name], given),
            extra + render_conversation(turns),
            UNIT,
        ),
        judges,
    )


async def _turn_relevancy(
    metric: ConversationMetric, turns: Sequence[TurnRecord], judges: JudgeFactory
) -> MetricResult:
    """One judge call per turn, one after another (rate limits, replayable order)."""
    outcome = Outcome("turn_relevancy", "conversation", metric.threshold, metric.fail_on_error)
    results = []
    for index in range(len(turns)):
        own = Outcome("turn_relevancy", "conversation", metric.threshold, metric.fail_on_error)
        request = JudgeRequest(
            own,
            metric.model,
            _instructions(TASKS["turn_relevancy"], ""),
            render_conversation(turns[: index + 1]),
            UNIT,
        )
        results.append(await judge(request, judges))
    failed = [(n, r) for n, r in enumerate(results, start=1) if r.status == "error"]
    if failed:
        number, first = failed[0]
        result = outcome.error(f"turn {number}: {first.error}")
        return result.model_copy(update={"judged": all(r.judged for r in results)})
    scores = [r.score or 0.0 for r in results]
    worst = min(range(len(results)), key=lambda i: scores[i])
    listed = ", ".join(f"{n}: {s:.2f}" for n, s in enumerate(scores, start=1))
    reason = (
        f"mean of {len(scores)} turn{'s' if len(scores) != 1 else ''} ({listed}); worst: "
        f"turn {worst + 1} ({scores[worst]:.2f}): {results[worst].reason or 'no reason given'}"
    )
    outcome.judge_prompt = results[worst].judge_prompt
    result = outcome.scored(sum(scores) / len(scores), reason)
    return result.model_copy(update={"judged": all(r.judged for r in results)})


def _turns(sample: Sample) -> tuple[TurnRecord, ...]:
    """The conversation; a single-turn case is a conversation of one turn."""
    if sample.conversation:
        return sample.conversation
    return (TurnRecord(input=sample.input, output=sample.output, tool_calls=sample.tool_calls),)


def _instructions(task: str, given: str) -> str:
    shown = "You are given a conversation between a user and an AI agent in <conversation>"
    if given == "goal":
        shown += ", and the user's goal in <goal>"
    elif given == "role":
        shown += ", and the agent's instructions (its role) in <role>"
    closing = f"Call `{JUDGE_TOOL}` with a short reason first, then the score: {UNIT.describe()}."
    return "\n\n".join((PREAMBLE, shown + ".", task, closing))


def render_conversation(turns: Sequence[TurnRecord]) -> str:
    blocks = []
    for number, turn in enumerate(turns, start=1):
        if number > 1 and turn.session != turns[number - 2].session:
            blocks.append(NEW_SESSION)
        lines = [f"[turn {number}]", f"user: {turn.input}"]
        for call in turn.tool_calls:
            if call.agent:
                continue  # a sub-agent's inner calls: the agent saw only its answer
            outcome = f"error: {call.error}" if call.error else _short(call.result)
            args = json.dumps(call.args, ensure_ascii=False, default=str)
            lines.append(f"agent called {call.name}({args}) -> {outcome}")
        lines.append(f"agent: {turn.output}")
        blocks.append("\n".join(lines))
    body = "\n\n".join(blocks)
    return f"<conversation>\n{body}\n</conversation>"


def _short(result: object) -> str:
    text = result if isinstance(result, str) else json.dumps(result, default=str)
    return text if len(text) <= RESULT_CHARS else text[:RESULT_CHARS] + " …"
