"""Compaction (`memory.compaction`): a long conversation's older turns are summarised by a
model call instead of dropped. The model is a scripted OpenAI-compatible server (the real
openai SDK over real HTTP) that answers from what each request carries, writes scripted
summaries, and refuses a request whose tool calls and results are not paired, as a
provider does."""

from __future__ import annotations

import io
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from conftest import Write
from holodeck.cli.chat.view import ChatView
from holodeck.cli.main import cli
from holodeck.config.loader import load_agent
from holodeck.errors import DefinitionError
from holodeck.runtime import Agent, FinalMessage, HistoryCompacted, RunOptions
from holodeck.runtime._compaction import SUMMARY_PREFIX, is_summary
from holodeck.runtime._session import Session
from holodeck.spec import SpecError
from scripted_servers import Call, Fail, OpenAIServer, Step, text, tool_calls
from server_harness import Serve

pytestmark = pytest.mark.anyio

WINDOW = 3000  # tokens: small, so a 200-turn conversation must be compacted many times
FACT = "Please remember: my locker code is 4417."
PADDING = " Some small talk about the weather, the train and lunch, to fill the turn."


class ConversingServer(OpenAIServer):
    """Answers each request from what it carries: a summary request (the `summary` tool
    offered) gets the sentences the user asked to remember; a turn that asks for a lookup
    gets a call of `lookup`, then an answer from its result; the question about the
    locker code is answered only if `4417` is in the request."""

    def __init__(self) -> None:
        super().__init__()
        self.unpaired: list[str] = []

    def _next(self) -> Step:
        body = self.requests[-1].body
        messages = body["messages"]
        problem = unpaired(messages)
        if problem:
            self.unpaired.append(problem)
            return Fail(400, problem, "invalid_request_error")
        if any(t["function"]["name"] == "summary" for t in body.get("tools", [])):
            facts = sorted(set(re.findall(r"Please remember: [^.]*\.", json.dumps(messages))))
            summary = " ".join(facts) or "Small talk only."
            return tool_calls(Call("summary", {"text": summary}))
        last = messages[-1]
        if last["role"] == "tool":
            return text(f"The lookup said {last['content']}.")
        said = str(last["content"])
        if "locker code" in said and "?" in said:
            known = "4417" in json.dumps(messages)
            return text("Your locker code is 4417." if known else "I do not know it.")
        if "look up" in said:
            return tool_calls(Call("lookup", {"item": said.split()[-1]}))
        return text("Noted." + PADDING)


def unpaired(messages: list[dict[str, Any]]) -> str:
    """What a provider refuses: a tool result without its call, or a call without its
    result right after it."""
    open_calls: set[str] = set()
    for message in messages:
        if message["role"] == "tool":
            if message["tool_call_id"] not in open_calls:
                return f"tool result {message['tool_call_id']} answers no call before it"
            open_calls.discard(message["tool_call_id"])
            continue
        if open_calls:
            return f"tool calls {sorted(open_calls)} have no results"
        for call in message.get("tool_calls") or []:
            open_calls.add(call["id"])
    return f"tool calls {sorted(open_calls)} have no results" if open_calls else ""


@pytest.fixture
def server() -> Any:
    running = ConversingServer().start()
    yield running
    running.stop()


def compacting_agent(server: OpenAIServer, compaction: str, window: int = WINDOW) -> dict[str, str]:
    return {
        "agent.yaml": (
            "name: keeper\n"
            f"model: {{provider: openai, name: gpt-4o-mini, endpoint: {server.url}, "
            f"api_key: sk-test, context_window: {window}}}\n"
            "instructions: {inline: Help the user.}\n"
            "tools:\n  - {type: function, name: lookup, file: tools.py, function: lookup}\n"
            f"memory:\n  compaction: {compaction}\n"
        ),
        "tools.py": "def lookup(item: str) -> str:\n    return f'shelf {item}'\n",
    }


@dataclass
class Talk:
    compactions: list[HistoryCompacted] = field(default_factory=list)
    compacted_before: list[int] = field(default_factory=list)  # the turns they came before
    answer: str = ""  # the last one


async def converse(session: Session, turns: int) -> Talk:
    """Talk for `turns` turns: the fact at turn 3, a lookup every 7th, the question last."""
    talk = Talk()
    for n in range(1, turns + 1):
        if n == 3:
            prompt = FACT
        elif n == turns:
            prompt = "What is my locker code?"
        elif n % 7 == 0:
            prompt = f"Turn {n}: please look up item{n}"
        else:
            prompt = f"Turn {n}." + PADDING
        async for event in session.run(prompt, stream_text=False):
            if isinstance(event, HistoryCompacted):
                talk.compactions.append(event)
                talk.compacted_before.append(n)
            elif isinstance(event, FinalMessage):
                talk.answer = event.text
    return talk


async def test_a_fact_from_turn_3_is_known_at_turn_200_and_every_request_fits_the_window(
    write: Write, server: ConversingServer
) -> None:
    root = write(compacting_agent(server, "{at: 0.8, keep_recent: 3}"))
    async with Agent(load_agent(root)) as agent, agent.session() as session:
        talk = await converse(session, 200)
        saved = json.loads(session.to_json())
        requests = session.spend.usage.requests

    assert talk.answer == "Your locker code is 4417."
    assert server.unpaired == []  # no request parted a tool call from its result
    sizes = [len(json.dumps(r.body)) // 4 for r in server.requests]
    assert max(sizes) < WINDOW, f"largest request ~{max(sizes)} tokens"
    last = server.requests[-1].body["messages"]
    summaries = [
        m["content"] for m in last if m["role"] == "system" and SUMMARY_PREFIX in m["content"]
    ]
    assert len(summaries) == 1 and "4417" in summaries[0]  # the fact came through the summary
    compactions = talk.compactions
    assert len(compactions) >= 3 and all(c.tokens_after < c.tokens_before for c in compactions)
    summary_calls = [
        r
        for r in server.requests
        if "tools" in r.body and r.body["tools"][0]["function"]["name"] == "summary"
    ]
    assert len(summary_calls) == len(compactions)
    # the session's usage counts every request made, the summaries' included
    assert requests == len(server.requests)
    first = saved["messages"][0]
    assert first["parts"][0]["part_kind"] == "system-prompt"
    assert first["parts"][0]["content"].startswith(SUMMARY_PREFIX)


async def test_the_tool_definitions_count_toward_the_window(
    write: Write, server: ConversingServer
) -> None:
    # a tool whose description alone takes over a third of the window: a request is the
    # history plus the tools, so compaction must start earlier than the history alone says
    long_doc = " ".join(f"Shelf rule {n}: items are kept by aisle and row." for n in range(110))
    files = compacting_agent(server, "{at: 0.8, keep_recent: 2}")
    files["tools.py"] = (
        f"def lookup(item: str) -> str:\n    {long_doc!r}\n    return f'shelf {{item}}'\n"
    )
    root = write(files)
    async with Agent(load_agent(root)) as agent, agent.session() as session:
        talk = await converse(session, 60)

    assert talk.answer == "Your locker code is 4417."
    tools = [
        r
        for r in server.requests
        if r.body.get("tools", [{}])[0].get("function", {}).get("name") == "lookup"
    ]
    assert len(json.dumps(tools[0].body["tools"])) // 4 > WINDOW // 3  # the tools are that big
    sizes = [len(json.dumps(r.body)) // 4 for r in server.requests]
    assert max(sizes) < WINDOW, f"largest request ~{max(sizes)} tokens"
    assert talk.compactions


async def test_the_latest_turns_stay_word_for_word_with_their_tool_calls_paired(
    write: Write, server: ConversingServer
) -> None:
    root = write(compacting_agent(server, "{keep_recent: 2}", window=400))
    async with Agent(load_agent(root)) as agent, agent.session() as session:
        talk = await converse(session, 15)
        kept = session.messages
        restored = Session.from_json(agent, session.to_json())

    last = talk.compacted_before[-1]  # the last compaction came before this turn
    assert last >= 14 and server.unpaired == []
    assert is_summary(kept[0]) and not any(is_summary(m) for m in kept[1:])
    # the 2 turns before it word for word, then those after it; turn 14 (a lookup: its
    # call and result) among them
    said = {13: f"Turn 13.{PADDING}", 14: "Turn 14: please look up item14"}
    said |= {12: f"Turn 12.{PADDING}", 15: "What is my locker code?"}
    prompts = [p.content for m in kept for p in m.parts if p.part_kind == "user-prompt"]
    assert prompts == [said[n] for n in range(last - 2, 16)]
    calls = [p.tool_call_id for m in kept for p in m.parts if p.part_kind == "tool-call"]
    results = [p.tool_call_id for m in kept for p in m.parts if p.part_kind == "tool-return"]
    assert calls == results and len(calls) == 1
    assert is_summary(restored.messages[0])  # a stored session keeps its summary marked


async def test_without_compaction_the_oldest_turns_are_dropped(
    write: Write, server: ConversingServer
) -> None:
    files = compacting_agent(server, "{enabled: false}")
    files["agent.yaml"] = files["agent.yaml"].replace(
        "  compaction: {enabled: false}\n", "  max_messages: 8\n"
    )
    root = write(files)
    async with Agent(load_agent(root)) as agent, agent.session() as session:
        talk = await converse(session, 20)
    assert talk.compactions == [] and talk.answer == "I do not know it."


async def test_a_model_whose_window_is_unknown_needs_context_window(
    write: Write, server: ConversingServer
) -> None:
    files = compacting_agent(server, "{}")
    files["agent.yaml"] = (
        files["agent.yaml"]
        .replace("name: gpt-4o-mini", "name: my-own-model")
        .replace(f", context_window: {WINDOW}", "")
    )
    root = write(files)
    async with Agent(load_agent(root), RunOptions()) as agent, agent.session() as session:
        with pytest.raises(DefinitionError) as raised:
            await converse(session, 2)
    assert "context_window" in str(raised.value) and "my-own-model" in str(raised.value)


def test_max_messages_and_compaction_together_are_an_error(write: Write, tmp_path: Path) -> None:
    root = write(
        {
            "agent.yaml": "name: a\nmodel: {provider: test}\ninstructions: {inline: Hi.}\n"
            "memory: {max_messages: 10, compaction: {}}\n"
        }
    )
    with pytest.raises(SpecError) as raised:
        load_agent(root)
    assert "`max_messages` drops old messages and `compaction` summarises them" in str(raised.value)


async def test_the_summary_is_written_by_the_configured_model(
    write: Write, server: ConversingServer
) -> None:
    summariser = (
        f"{{keep_recent: 1, model: {{provider: openai, name: summariser-mini, "
        f"endpoint: {server.url}, api_key: sk-test}}}}"
    )
    root = write(compacting_agent(server, summariser, window=300))
    async with Agent(load_agent(root)) as agent, agent.session() as session:
        talk = await converse(session, 6)
    models = [r.body["model"] for r in server.requests]
    summaries = [
        r.body["model"]
        for r in server.requests
        if r.body.get("tools", [{}])[0].get("function", {}).get("name") == "summary"
    ]
    assert talk.compactions and set(summaries) == {"summariser-mini"}
    assert models.count("gpt-4o-mini") == len(models) - len(summaries)


def test_a_served_stream_shows_the_compaction_and_its_cost(
    write: Write, server: ConversingServer, serve: Serve
) -> None:
    root = write(compacting_agent(server, "{keep_recent: 1}", window=300))
    with serve(root) as served:
        session = served.chat(FACT).json()["session_id"]
        streamed = [served.events(f"Turn {n}.{PADDING}", session_id=session) for n in range(6)]
    compacted = [data for events in streamed for name, data in events if name == "compacted"]
    assert compacted and compacted[0]["usage"]["requests"] == 1
    assert compacted[0]["tokens_after"] < compacted[0]["tokens_before"]
    turn = next(events for events in streamed if any(name == "compacted" for name, _ in events))
    assert [name for name, _ in turn][:2] == ["session", "compacted"]


def test_chat_says_when_earlier_turns_were_summarised() -> None:
    out, info = io.StringIO(), io.StringIO()
    view = ChatView(out, info, markdown=False, verbose=False)
    view.turn_started()
    view.event(HistoryCompacted(40, 6, 2400, 310))
    assert "earlier turns summarised: 40 messages into one, 6 kept" in info.getvalue()
    assert out.getvalue() == ""  # the answer alone goes to stdout


def test_chat_refuses_max_messages_for_an_agent_that_compacts(
    write: Write, server: ConversingServer
) -> None:
    root = write(compacting_agent(server, "{}"))
    result = CliRunner().invoke(cli, ["chat", str(root), "--max-messages", "6"], input="hi\n")
    assert result.exit_code == 2
    assert "--max-messages drops old messages, and keeper summarises them instead" in result.stderr
    assert "Traceback" not in result.output + result.stderr


async def test_a_trace_shows_the_summary_call(write: Write, server: ConversingServer) -> None:
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from holodeck.observability import Telemetry
    from holodeck.spec.models.observability_settings import ObservabilitySettings

    telemetry = Telemetry(ObservabilitySettings(enabled=True), "svc", env={})
    spans = InMemorySpanExporter()
    telemetry.tracer_provider.add_span_processor(SimpleSpanProcessor(spans))
    root = write(compacting_agent(server, "{keep_recent: 1}", window=300))
    async with Agent(load_agent(root), telemetry=telemetry) as agent, agent.session() as session:
        talk = await converse(session, 5)
    names = [span.name for span in spans.get_finished_spans()]
    assert names.count("invoke_agent history-summariser") == len(talk.compactions) >= 1


IMAGE = "spec_version: 1\nname: omni\nexecutor: {model: openai/gpt-4o, context_window: 64000}\n"


def test_omnigents_compaction_block_is_read_where_it_means_the_same(write: Write) -> None:
    root = write(
        {
            "config.yaml": IMAGE
            + "compaction: {trigger_threshold: 0.7, recent_window: 5, headroom_enabled: true}\n"
        }
    )
    spec = load_agent(root)
    compaction = spec.memory.compaction
    assert compaction is not None and compaction.at == 0.7
    assert compaction.keep_recent == 3  # whole turns holding at least the last 5 messages
    assert spec.model is not None and spec.model.context_window == 64000
    (warning,) = spec.warnings
    assert "Headroom" in warning.message and warning.line == 4


def test_an_omnigent_compaction_key_with_no_meaning_here_is_an_error(write: Write) -> None:
    root = write({"config.yaml": IMAGE + "compaction: {summarise_every: 3}\n"})
    with pytest.raises(SpecError) as raised:
        load_agent(root)
    text = raised.value.render()
    assert "`compaction.summarise_every` is not a compaction setting HoloDeck reads" in text
    assert "memory: {compaction: {at, keep_recent, model}}" in text
