"""The runtime loop with the offline `test` model: events, tools, failures, middleware,
sub-agents, skills, structured output, interaction settings and cancellation."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from conftest import Write
from holodeck import RunOptions
from holodeck.config.loader import load_agent
from holodeck.errors import DefinitionError
from holodeck.runtime import (
    Agent,
    Attachment,
    Event,
    FinalMessage,
    InputRefused,
    Session,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    Usage,
)
from holodeck.tools.errors import ToolLoadError

pytestmark = pytest.mark.anyio

HEAD = """
name: demo
model: {provider: openai, name: gpt-4o}
instructions: {inline: You help.}
"""


def tool(name: str, function: str, file: str = "tools.py") -> str:
    return f"  - {{type: function, name: {name}, file: {file}, function: {function}}}\n"


def agent_for(root: Path, **options: Any) -> Agent:
    return Agent(load_agent(root), RunOptions(model="test", **options))


async def events_of(
    agent: Agent | Session,
    prompt: str = "hello /call *",
    expected_tools: list[str] | None = None,
    **kwargs: Any,
) -> list[Event]:
    """One turn; the offline model calls `expected_tools` (as a test case's would), else
    what the prompt asks for (by default every tool: `/call *`)."""
    script = (agent.agent if isinstance(agent, Session) else agent).options.offline
    with script.expecting(expected_tools):
        return [event async for event in agent.run(prompt, **kwargs)]


def finished(events: list[Event]) -> dict[str, ToolCallFinished]:
    return {e.name: e for e in events if isinstance(e, ToolCallFinished)}


async def test_a_turn_streams_tool_calls_text_usage_and_final(write: Write) -> None:
    root = write(
        {
            "agent.yaml": HEAD + "tools:\n" + tool("weather", "weather"),
            "tools.py": '''
from dataclasses import dataclass

@dataclass
class Report:
    city: str
    sky: str

def weather(city: str) -> Report:
    """Today's weather.

    Args:
        city: Which city.
    """
    return Report(city, "sunny")
''',
        }
    )
    events = await events_of(agent_for(root))
    kinds = [type(e).__name__ for e in events]
    assert kinds[0] == "ToolCallStarted"
    assert kinds.index("ToolCallFinished") < kinds.index("TextDelta")
    assert kinds[-2:] == ["Usage", "FinalMessage"]
    call = finished(events)["weather"]
    assert call.ok and call.result.sky == "sunny" and call.duration_ms >= 0
    final = events[-1]
    assert isinstance(final, FinalMessage)
    assert final.text == "city a, sky sunny"  # the model saw the serialised dataclass
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == final.text
    assert [c.name for c in final.tool_calls] == ["weather"]
    assert isinstance(events[-2], Usage) and events[-2].requests == 2


async def test_parallel_tool_calls_run_concurrently(write: Write) -> None:
    root = write(
        {
            "agent.yaml": HEAD + "tools:\n" + tool("first", "first") + tool("second", "second"),
            "tools.py": """
import asyncio
both = asyncio.Event()
arrived = []

async def first() -> str:
    arrived.append(1)
    if len(arrived) == 2:
        both.set()
    await asyncio.wait_for(both.wait(), 5)  # only returns if `second` runs meanwhile
    return "one"

async def second() -> str:
    arrived.append(2)
    if len(arrived) == 2:
        both.set()
    await asyncio.wait_for(both.wait(), 5)
    return "two"
""",
        }
    )
    calls = finished(await events_of(agent_for(root)))
    assert (calls["first"].result, calls["second"].result) == ("one", "two")


async def test_a_failing_tool_never_stops_the_turn(write: Write) -> None:
    root = write(
        {
            "agent.yaml": HEAD + "tools:\n" + tool("broken", "broken") + tool("fine", "fine"),
            "tools.py": "def broken() -> str:\n    raise ValueError('disk full')\n\n"
            "def fine() -> str:\n    return 'ok'\n",
        }
    )
    events = await events_of(agent_for(root))
    calls = finished(events)
    assert calls["broken"].error == "ValueError: disk full"
    assert calls["broken"].result == ""  # what the model received
    assert calls["fine"].ok
    final = events[-1]
    assert isinstance(final, FinalMessage) and "fine: ok" in final.text


MIDDLEWARE_TOOLS = """
attempts = {"n": 0}

def flaky(x: str) -> str:
    attempts["n"] += 1
    if attempts["n"] < 3:
        raise ConnectionError("try again")
    return "worked on attempt " + str(attempts["n"])

def down() -> str:
    raise TimeoutError("service down")

def shout(text: str) -> str:
    return text
"""

RETRY = """
async def on_tool_error(call, error, retry):
    if isinstance(error, ConnectionError):
        for _ in range(5):
            try:
                return await retry()
            except ConnectionError:
                continue
    raise error
"""
FALLBACK = """
def on_tool_error(call, error, retry):
    if call.name == "down":
        return {"fallback": True, "reason": str(error)}
    raise error
"""
REWRITE = """
def before_tool(call):
    if call.name == "shout":
        return {"text": "hello"}

def after_tool(call, result):
    return result.upper() if call.name == "shout" else result
"""


async def test_retry_fallback_and_rewriting_middleware(write: Write) -> None:
    agent_yaml = (
        HEAD
        + "middleware: [mw/retry.py, mw/fallback.py, mw/rewrite.py]\ntools:\n"
        + tool("flaky", "flaky")
        + tool("down", "down")
        + tool("shout", "shout")
    )
    root = write(
        {
            "agent.yaml": agent_yaml,
            "tools.py": MIDDLEWARE_TOOLS,
            "mw/retry.py": RETRY,
            "mw/fallback.py": FALLBACK,
            "mw/rewrite.py": REWRITE,
        }
    )
    calls = finished(await events_of(agent_for(root)))
    assert calls["flaky"].result == "worked on attempt 3"
    assert calls["flaky"].error is None  # recovered by retrying
    assert calls["down"].result == {"fallback": True, "reason": "service down"}
    assert calls["down"].error == "TimeoutError: service down"  # it did fail
    assert calls["shout"].args == {"text": "hello"}
    assert calls["shout"].result == "HELLO"


async def test_a_tool_past_its_timeout_fails_like_any_other(write: Write) -> None:
    agent_yaml = HEAD + (
        "tools:\n  - {type: function, name: slow, file: tools.py, function: slow, timeout: 0.05}\n"
    )
    root = write(
        {
            "agent.yaml": agent_yaml,
            "tools.py": "import asyncio\n\nasync def slow() -> str:\n"
            "    await asyncio.sleep(30)\n    return 'late'\n",
        }
    )
    events = await events_of(agent_for(root))
    call = finished(events)["slow"]
    assert call.error == "ToolTimeout: no result after 0.05 s (the tool's timeout)"
    assert call.result == ""
    assert isinstance(events[-1], FinalMessage)


async def test_middleware_file_without_hooks_is_refused(write: Write) -> None:
    root = write({"agent.yaml": HEAD + "middleware: [mw.py]\n", "mw.py": "x = 1\n"})
    with pytest.raises(ToolLoadError, match="defines none of before_tool"):
        agent_for(root).prepare()


async def test_params_reach_tools_and_stay_out_of_the_schema(write: Write) -> None:
    root = write(
        {
            "config.yaml": "spec_version: 1\nllm: {model: openai/gpt-4o}\n"
            "params: {max_results: 3, region: eu}\n",
            "tools/python/search.py": "def search(query: str, params: dict) -> dict:\n"
            "    return {'query': query, 'limit': params['max_results']}\n",
        }
    )
    call = finished(await events_of(agent_for(root)))["search"]
    assert set(call.args) == {"query"}  # the model was never asked for `params`
    assert call.result["limit"] == 3


async def test_docstring_styles_describe_parameters(write: Write) -> None:
    from holodeck.runtime.toolsets import function_tool
    from holodeck.spec.models.tools import FunctionTool

    root = write(
        {
            "styles.py": '''
def google(city: str) -> str:
    """Google style.

    Args:
        city: The city, Google.
    """
    return city

def numpy(city: str) -> str:
    """NumPy style.

    Parameters
    ----------
    city : str
        The city, NumPy.
    """
    return city

def sphinx(city: str) -> str:
    """Sphinx style.

    :param city: The city, Sphinx.
    """
    return city
'''
        }
    )
    for style in ("google", "numpy", "sphinx"):
        spec = FunctionTool(name=style, file="styles.py", function=style)
        definition = function_tool(spec, root, {}).tool_def
        described = definition.parameters_json_schema["properties"]["city"]["description"]
        assert described.endswith(style.capitalize().replace("Numpy", "NumPy") + ".")


async def test_tool_load_errors_name_file_and_line(write: Write) -> None:
    root = write(
        {
            "agent.yaml": HEAD + "tools:\n" + tool("f", "f"),
            "tools.py": "import os\n\nVALUE = 1 / 0\n\ndef f() -> None: ...\n",
        }
    )
    with pytest.raises(ToolLoadError) as caught:
        agent_for(root).prepare()
    assert "tools.py: line 3: ZeroDivisionError" in str(caught.value)


async def test_expected_tools_limit_what_the_test_model_calls(write: Write) -> None:
    root = write(
        {
            "agent.yaml": HEAD + "tools:\n" + tool("a", "a") + tool("b", "b"),
            "tools.py": "def a() -> str:\n    return 'A'\n\ndef b() -> str:\n    return 'B'\n",
        }
    )
    calls = finished(await events_of(agent_for(root), expected_tools=["b"]))
    assert list(calls) == ["b"]


async def test_structured_output_is_parsed(write: Write) -> None:
    schema = (
        "response_format:\n  type: object\n  properties:\n    answer: {type: string}\n"
        "    confidence: {type: number}\n  required: [answer, confidence]\n"
    )
    root = write({"agent.yaml": HEAD + schema})
    final = (await events_of(agent_for(root)))[-1]
    assert isinstance(final, FinalMessage)
    assert isinstance(final.output, dict)
    assert set(final.output) == {"answer", "confidence"}
    assert isinstance(final.output["confidence"], float | int)


async def test_history_is_kept_unless_not_conversational(write: Write) -> None:
    chatty = agent_for(write({"agent.yaml": HEAD})).session()
    await events_of(chatty, "one")
    await events_of(chatty, "two")
    assert len(chatty.messages) == 4  # two requests and two responses
    image = write(
        {
            "config.yaml": "spec_version: 1\nllm: {model: openai/gpt-4o}\n"
            "interaction: {conversational: false}\n"
        }
    )
    stateless = agent_for(image).session()
    await events_of(stateless, "one")
    await events_of(stateless, "two")
    assert stateless.messages == []


async def test_input_modalities_are_enforced(write: Write) -> None:
    picture = Attachment(b"\x89PNG\r\n\x1a\n", "image/png", "cat.png")
    text_only = agent_for(write({"agent.yaml": HEAD}))
    with pytest.raises(InputRefused, match="does not accept image input"):
        await events_of(text_only, attachments=[picture])
    vision = agent_for(
        write(
            {
                "config.yaml": "spec_version: 1\nllm: {model: openai/gpt-4o}\n"
                "interaction: {modalities: {input: [text, image]}}\n"
            }
        )
    )
    final = (await events_of(vision, "describe", attachments=[picture]))[-1]
    assert isinstance(final, FinalMessage)


async def test_output_modalities_the_runtime_cannot_produce_are_refused(write: Write) -> None:
    root = write(
        {
            "config.yaml": "spec_version: 1\nllm: {model: openai/gpt-4o}\n"
            "interaction: {modalities: {output: [text, audio]}}\n"
        }
    )
    with pytest.raises(DefinitionError, match="output modalities audio cannot be produced"):
        agent_for(root).prepare()


async def test_prompt_tools_render_their_template(write: Write) -> None:
    agent_yaml = (
        HEAD
        + """tools:
  - type: prompt
    name: summarize
    description: Summarize a text.
    template: "Summarize in {{ words }} words: {{ text }}"
    parameters:
      text: {description: The text}
      words: {type: integer, description: How many words}
"""
    )
    call = finished(await events_of(agent_for(write({"agent.yaml": agent_yaml}))))["summarize"]
    assert call.ok
    assert call.result.startswith("Test answer to: Summarize in ")  # the rendered prompt


async def test_prompt_template_using_undeclared_parameters_is_refused(write: Write) -> None:
    agent_yaml = (
        HEAD
        + """tools:
  - {type: prompt, name: p, description: d, template: "Hi {{ name }} {{ other }}",
     parameters: {name: {}}}
"""
    )
    with pytest.raises(ToolLoadError, match="uses `other` but does not declare it"):
        agent_for(write({"agent.yaml": agent_yaml})).prepare()


async def test_skills_load_on_demand(write: Write) -> None:
    root = write(
        {
            "agent.yaml": HEAD + "skills: [skills/triage]\n",
            "skills/triage/SKILL.md": "---\nname: triage\ndescription: Sort tickets.\n---\n"
            "Read the ticket, then pick a queue.\n",
            "skills/triage/references/queues.md": "billing, tech, sales",
        }
    )
    session = agent_for(root).session()
    calls = finished(await events_of(session, expected_tools=["load_skill"]))
    assert calls["load_skill"].result.startswith("Read the ticket, then pick a queue.")
    assert "references/queues.md" in calls["load_skill"].result
    first_request = session.messages[0]
    assert "triage: Sort tickets." in (getattr(first_request, "instructions", "") or "")
    assert "You help." in (getattr(first_request, "instructions", "") or "")


async def test_sub_agent_events_are_nested_under_the_calling_tool(write: Write) -> None:
    root = write(
        {
            "config.yaml": "spec_version: 1\nllm: {model: openai/gpt-4o}\n"
            "tools: {agents: [researcher]}\n",
            "agents/researcher/config.yaml": "spec_version: 1\ndescription: Finds facts.\n"
            "llm: {model: anthropic/claude-sonnet-4-5}\n",
            "agents/researcher/tools/python/lookup.py": "def lookup(topic: str) -> str:\n"
            "    return 'fact about ' + topic\n",
        }
    )
    # the sub-agent calls what its own prompt asks for: the task given to it
    events = await events_of(agent_for(root), '/call researcher {"task": "go /call lookup"}')
    started = [e for e in events if isinstance(e, ToolCallStarted)]
    parent = next(e for e in started if e.name == "researcher")
    child = next(e for e in started if e.name == "lookup")
    assert (parent.agent, parent.parent_call_id) == ("", None)
    assert (child.agent, child.parent_call_id) == ("researcher", parent.call_id)
    assert any(isinstance(e, TextDelta) and e.agent == "researcher" for e in events)
    result = finished(events)["researcher"].result
    assert "fact about" in result  # the sub-agent's answer came back as the tool result


async def test_interrupting_a_turn(write: Write) -> None:
    root = write(
        {
            "agent.yaml": HEAD + "tools:\n" + tool("slow", "slow"),
            "tools.py": """
import asyncio
state = {"cancelled": False}

async def slow() -> str:
    try:
        await asyncio.sleep(30)
    except asyncio.CancelledError:
        state["cancelled"] = True
        raise
    return "done"
""",
        }
    )
    session = agent_for(root).session()
    stream = session.run("start /call slow")
    async for event in stream:
        if isinstance(event, ToolCallStarted):
            break  # the user pressed Ctrl+C while the tool runs
    await stream.aclose()
    from holodeck.tools.python_modules import load_module

    module = load_module(root / "tools.py")
    assert module.state["cancelled"] is True
    assert session.messages == []  # as before the turn: no dangling tool call
    assert session.spend.cancelled == 1
    quick = agent_for(write({"agent.yaml": HEAD}))
    assert isinstance((await events_of(quick))[-1], FinalMessage)


async def test_agent_yaml_agent_tools_run_other_agents(write: Write) -> None:
    root = write(
        {
            "agent.yaml": HEAD
            + "tools:\n  - {type: agent, name: critic, path: critic, description: Reviews.}\n",
            "critic/agent.yaml": HEAD.replace("name: demo", "name: critic")
            + "tools:\n"
            + tool("score", "score"),
            "critic/tools.py": "def score() -> int:\n    return 7\n",
        }
    )
    events = await events_of(agent_for(root), '/call critic {"task": "review /call score"}')
    calls = finished(events)
    assert calls["score"].agent == "critic"
    assert calls["critic"].result == "7"  # the critic's answer, from its own tool


def test_prompt_output_that_is_json_comes_back_parsed() -> None:
    from holodeck.runtime.toolsets._prompt import _maybe_json

    assert _maybe_json('```json\n{"a": [1, 2]}\n```') == {"a": [1, 2]}
    assert _maybe_json(" [1, 2] ") == [1, 2]
    assert _maybe_json("{not json") == "{not json"
    assert _maybe_json("plain words") == "plain words"


def test_the_runtime_doc_example_prints_what_the_doc_shows(tmp_path: Path) -> None:
    import re
    import subprocess
    import sys

    repo = Path(__file__).resolve().parents[2]
    doc = (repo / "docs" / "runtime.md").read_text(encoding="utf-8")
    block = re.search(r"```text\n\$ python (.*?)\n(.*?)```", doc, flags=re.DOTALL)
    assert block is not None
    command, expected = block.group(1), block.group(2)
    args = [a.strip('"') for a in re.findall(r'"[^"]*"|\S+', command)]
    done = subprocess.run(
        [sys.executable, *args], cwd=repo, capture_output=True, text=True, timeout=120, check=True
    )
    # durations vary from run to run; everything else must match
    normalise = lambda text: re.sub(r"in \d+ ms", "in N ms", text)  # noqa: E731
    assert normalise(done.stdout) == normalise(expected)


async def test_a_turns_calls_are_listed_in_the_order_the_model_made_them(write: Write) -> None:
    """Calls made at once end in any order; the final message lists them as made."""
    root = write(
        {
            "agent.yaml": HEAD + "tools:\n" + tool("first", "first") + tool("second", "second"),
            "tools.py": """
import asyncio
second_done = asyncio.Event()

async def first() -> str:
    await second_done.wait()  # ends only after `second`
    return "1"

async def second() -> str:
    second_done.set()
    return "2"
""",
        }
    )
    events = await events_of(agent_for(root), expected_tools=["first", "second"])
    ended = [e.name for e in events if isinstance(e, ToolCallFinished)]
    final = events[-1]
    assert isinstance(final, FinalMessage)
    assert ended == ["second", "first"]
    assert [c.name for c in final.tool_calls] == ["first", "second"]


async def test_a_turn_can_skip_text_streaming_and_still_answer(write: Write) -> None:
    session = agent_for(write({"agent.yaml": HEAD})).session()
    streamed = await events_of(session, "one")
    whole = [event async for event in session.run("two", stream_text=False)]
    assert any(isinstance(e, TextDelta) for e in streamed)
    assert not any(isinstance(e, TextDelta) for e in whole)
    final = whole[-1]
    assert isinstance(final, FinalMessage) and final.text
    assert len(session.messages) == 4  # both turns kept
