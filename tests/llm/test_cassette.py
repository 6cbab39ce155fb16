"""Cassettes: a run recorded with one model replays offline, identically, with another."""

from __future__ import annotations

import dataclasses
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic_ai import Agent as PydanticAgent
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from ruamel.yaml import YAML

from conftest import Write
from holodeck import RunOptions
from holodeck.config.loader import load_agent
from holodeck.llm.cassette import Cassette, CassetteError, CassetteMiss
from holodeck.llm.errors import ProviderError
from holodeck.llm.providers import BuiltModel
from holodeck.runtime import Agent, Event, FinalMessage, TextDelta, ToolCallFinished, Usage
from holodeck.spec.models.model_settings import ModelSettings
from holodeck.spec.models.settings import ExecutionSettings, Settings
from scripted_servers import Call, OpenAIServer, text, tool_calls

pytestmark = pytest.mark.anyio

FAKE_KEY = "sk-cassette-test-0123456789abcdef"

AGENT = """
name: helper
model: {provider: openai, name: gpt-4o}
instructions: {inline: You help.}
tools:
  - {type: function, name: weather, file: tools.py, function: weather}
  - type: prompt
    name: summarize
    description: Summarize a text.
    template: "Summarize: {{ text }}"
    parameters:
      text: {type: string}
  - {type: agent, name: critic, path: critic, description: Reviews an answer.}
"""
CRITIC = """
name: critic
model: {provider: openai, name: gpt-4o-mini}
instructions: {inline: You review.}
tools:
  - {type: function, name: score, file: tools.py, function: score}
"""
TOOLS = '''
def weather(city: str) -> str:
    """Today's weather.

    Args:
        city: Which city.
    """
    return f"sunny in {city}"
'''
CRITIC_TOOLS = "def score() -> int:\n    return 7\n"


@pytest.fixture
def agent_dir(write: Write) -> Path:
    return write(
        {
            "agent.yaml": AGENT,
            "tools.py": TOOLS,
            "critic/agent.yaml": CRITIC,
            "critic/tools.py": CRITIC_TOOLS,
        }
    )


@pytest.fixture
def server() -> Iterator[OpenAIServer]:
    """A real OpenAI-compatible endpoint on 127.0.0.1; unscripted, it answers HTTP 500."""
    served = OpenAIServer()
    served.start()
    try:
        yield served
    finally:
        served.stop()


async def run_turn(
    root: Path, options: RunOptions, prompt: str = "hello there /call *"
) -> list[Event]:
    agent = Agent(load_agent(root), options)
    return [event async for event in agent.run(prompt)]


def comparable(events: list[Event]) -> tuple[dict[str, str], list[str]]:
    """Each agent's streamed text (replay re-chunks it), and the other events without
    timings in a set order: tools called together finish in any order."""
    texts: dict[str, str] = {}
    others: list[str] = []
    for event in events:
        if isinstance(event, TextDelta):
            texts[event.agent] = texts.get(event.agent, "") + event.text
            continue
        if isinstance(event, ToolCallFinished):
            event = dataclasses.replace(event, duration_ms=0.0)
        elif isinstance(event, FinalMessage):
            calls = [dataclasses.replace(c, duration_ms=0.0) for c in event.tool_calls]
            event = dataclasses.replace(event, tool_calls=tuple(sorted(calls, key=repr)))
        others.append(repr(event))
    return texts, sorted(others)


def openai_at(server: OpenAIServer, **env: str) -> dict[str, str]:
    return {"OPENAI_API_KEY": FAKE_KEY, "OPENAI_BASE_URL": server.url, **env}


async def test_a_recorded_run_replays_offline_with_another_model(
    agent_dir: Path, tmp_path: Path, server: OpenAIServer
) -> None:
    path = tmp_path / "run.yaml"
    recorder = Cassette.record(path)
    recorded = await run_turn(agent_dir, RunOptions(model="test", cassette=recorder))
    recorder.save()

    # a real OpenAI model whose endpoint answers only errors: any call would fail the turn
    replayer = Cassette.replay(path)
    options = RunOptions(model="openai/gpt-4o", cassette=replayer, env=openai_at(server))
    replayed = await run_turn(agent_dir, options)

    assert server.requests == []
    assert comparable(replayed) == comparable(recorded)
    final = replayed[-1]
    assert isinstance(final, FinalMessage) and final.text.startswith("weather: ")
    assert {c.name for c in final.tool_calls} == {"weather", "summarize", "critic"}
    deltas = [e for e in replayed if isinstance(e, TextDelta) and e.agent == ""]
    assert len(deltas) > 1  # replayed as a stream, not one block
    usage = [e for e in replayed if isinstance(e, Usage)]
    assert usage == [e for e in recorded if isinstance(e, Usage)]


async def test_the_agent_its_prompt_tool_and_its_sub_agent_share_one_cassette(
    agent_dir: Path, tmp_path: Path, server: OpenAIServer
) -> None:
    path = tmp_path / "run.yaml"
    recorder = Cassette.record(path)
    await run_turn(agent_dir, RunOptions(model="test", cassette=recorder))
    recorder.save()

    interactions = YAML(typ="safe").load(path.read_text(encoding="utf-8"))["interactions"]
    users = [i["request"]["user"] for i in interactions]
    assert "Summarize: hello there" in users  # the prompt tool's request: `text` from the words
    assert any(i["request"]["tools"] == ["score"] for i in interactions)  # the sub-agent's
    assert {i["model"] for i in interactions} == {"test"}


async def test_each_model_keeps_its_own_answers(tmp_path: Path) -> None:
    path = tmp_path / "two-models.yaml"

    def answering(word: str) -> FunctionModel:
        def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            return ModelResponse(parts=[TextPart(word)])

        return FunctionModel(answer, model_name=word)

    recorder = Cassette.record(path)
    big = recorder.wrap(BuiltModel(answering("big answer"), {}, "openai", "gpt-4o"))
    small = recorder.wrap(BuiltModel(answering("small answer"), {}, "openai", "gpt-4o-mini"))
    assert (await PydanticAgent(big.model).run("same question")).output == "big answer"
    assert (await PydanticAgent(small.model).run("same question")).output == "small answer"
    recorder.save()

    replayer = Cassette.replay(path)
    small = replayer.wrap(BuiltModel(answering("never"), {}, "openai", "gpt-4o-mini"))
    big = replayer.wrap(BuiltModel(answering("never"), {}, "openai", "gpt-4o"))
    assert (await PydanticAgent(small.model).run("same question")).output == "small answer"
    assert (await PydanticAgent(big.model).run("same question")).output == "big answer"


async def test_a_request_missing_from_the_cassette_is_a_clear_error(
    agent_dir: Path, tmp_path: Path
) -> None:
    path = tmp_path / "run.yaml"
    recorder = Cassette.record(path)
    await run_turn(agent_dir, RunOptions(model="test", cassette=recorder))
    recorder.save()

    options = RunOptions(model="test", cassette=Cassette.replay(path))
    with pytest.raises(CassetteMiss) as caught:
        await run_turn(agent_dir, options, prompt="a question never recorded")
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith("test: no response recorded in ")
    assert str(path) in message
    assert "'a question never recorded'" in message and "weather" in message
    assert f"--record {path}" in message
    assert isinstance(caught.value, ProviderError)  # the runtime reports it as it is


async def test_a_changed_prompt_tool_request_stops_the_replay(
    agent_dir: Path, tmp_path: Path
) -> None:
    path = tmp_path / "run.yaml"
    recorder = Cassette.record(path)
    await run_turn(agent_dir, RunOptions(model="test", cassette=recorder))
    recorder.save()

    agent_yaml = agent_dir / "agent.yaml"
    agent_yaml.write_text(
        agent_yaml.read_text(encoding="utf-8").replace("Summarize:", "Sum up:"), encoding="utf-8"
    )
    with pytest.raises(CassetteMiss):
        await run_turn(agent_dir, RunOptions(model="test", cassette=Cassette.replay(path)))


async def test_replaying_a_missing_file_says_to_record_it(tmp_path: Path) -> None:
    with pytest.raises(CassetteError, match="no such cassette; record one with --record"):
        Cassette.replay(tmp_path / "absent.yaml")
    (tmp_path / "bad.yaml").write_text("interactions: 3\n", encoding="utf-8")
    with pytest.raises(CassetteError, match="not a cassette"):
        Cassette.replay(tmp_path / "bad.yaml")


async def test_secrets_never_enter_the_cassette(
    write: Write, tmp_path: Path, server: OpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    token = "tok-4f1e9c2a7b"
    monkeypatch.setenv("BILLING_SERVICE_TOKEN", token)
    monkeypatch.setenv("SHORT_SECRET", "pw1")
    root = write(
        {
            "agent.yaml": AGENT.split("tools:")[0]
            + "tools:\n  - {type: function, name: lookup, file: tools.py, function: lookup}\n",
            "tools.py": "import os\n\ndef lookup() -> str:\n"
            "    return 'token is ' + os.environ['BILLING_SERVICE_TOKEN']\n",
        }
    )
    server.script(tool_calls(Call("lookup", {})), text(f"The token is {token}."), text("pw1"))
    path = tmp_path / "secret.yaml"
    recorder = Cassette.record(path)
    options = RunOptions(cassette=recorder, env=openai_at(server))  # the real OpenAI client
    first = await run_turn(root, options, prompt=f"What is {token}?")
    agent = Agent(load_agent(root), options)
    await agent.answer("say the password")
    recorder.save()

    assert [r.headers["authorization"] for r in server.requests] == [f"Bearer {FAKE_KEY}"] * 3
    saved = path.read_text(encoding="utf-8")
    assert FAKE_KEY not in saved and "authorization" not in saved.lower()
    assert token not in saved
    assert "[redacted BILLING_SERVICE_TOKEN]" in saved
    assert "content: '[redacted SHORT_SECRET]'" in saved  # a whole string equal to a secret

    # the request keys were taken before redaction: the run still replays
    stopped = RunOptions(cassette=Cassette.replay(path), env=openai_at(server))
    replayed = await run_turn(root, stopped, prompt=f"What is {token}?")
    assert len(server.requests) == 3
    assert (
        next(e for e in replayed if isinstance(e, ToolCallFinished)).result == f"token is {token}"
    )
    final, recorded_final = replayed[-1], first[-1]
    assert isinstance(final, FinalMessage) and isinstance(recorded_final, FinalMessage)
    assert final.text == "The token is [redacted BILLING_SERVICE_TOKEN]."
    assert final.usage == recorded_final.usage


async def test_identical_requests_replay_in_recorded_order(
    write: Write, tmp_path: Path, server: OpenAIServer
) -> None:
    root = write({"agent.yaml": AGENT.split("tools:")[0]})
    server.script(text("first answer"), text("second answer"), text("third answer"))
    path = tmp_path / "repeat.yaml"
    recorder = Cassette.record(path)
    options = RunOptions(cassette=recorder, env=openai_at(server))
    recorded = [(await Agent(load_agent(root), options).answer("same")).text for _ in range(3)]
    recorder.save()
    assert recorded == ["first answer", "second answer", "third answer"]

    replayer = Cassette.replay(path)
    options = RunOptions(cassette=replayer, env=openai_at(server))
    replayed = [(await Agent(load_agent(root), options).answer("same")).text for _ in range(4)]
    assert replayed == [*recorded, "third answer"]  # once exhausted, the last again
    assert len(server.requests) == 3


async def test_the_file_is_readable_yaml_and_stable_across_recordings(
    agent_dir: Path, tmp_path: Path
) -> None:
    texts = []
    for name in ("one.yaml", "two.yaml"):
        recorder = Cassette.record(tmp_path / name)
        await run_turn(agent_dir, RunOptions(model="test", cassette=recorder))
        recorder.save()
        texts.append((tmp_path / name).read_text(encoding="utf-8"))
    assert texts[0] == texts[1]
    assert not list(tmp_path.glob(".*.yaml.*"))  # no temporary file left behind

    document = YAML(typ="safe").load(texts[0])
    assert document["version"] == 1
    for interaction in document["interactions"]:
        assert set(interaction) == {"key", "model", "request", "response"}
        assert len(interaction["key"]) == 16
    first = document["interactions"][0]
    assert first["request"] == {
        "user": "hello there /call *",
        "tools": ["weather", "summarize", "critic"],
    }
    assert "timestamp" not in texts[0] and "run_id" not in texts[0]
    assert "  - key: " in texts[0]
    # multi-line answers stay readable: a literal block, not an escaped string
    assert "content: |-\n" in texts[0]


async def test_replay_stands_in_for_a_model_it_cannot_build() -> None:
    model = ModelSettings(provider="openai", name="gpt-4o", temperature=0.2)
    with pytest.raises(ProviderError, match="no API key"):
        Cassette.record("unused.yaml").build(model, Settings(), {})

    replayer = Cassette("unused.yaml", "replay")
    built = replayer.build(model, Settings(), {}, timeout=30)
    assert (built.provider, built.name) == ("openai", "gpt-4o")
    assert built.settings == {"temperature": 0.2, "timeout": 30}
    with pytest.raises(CassetteMiss, match="openai/gpt-4o: no response recorded"):
        await PydanticAgent(built.model).run("anything")

    with pytest.raises(ProviderError, match="unknown provider"):
        replayer.build(ModelSettings(provider="nowhere", name="m"), Settings(), {})


async def test_a_replay_needs_no_api_key(agent_dir: Path, tmp_path: Path) -> None:
    path = tmp_path / "run.yaml"
    recorder = Cassette.record(path)
    recorded = await run_turn(agent_dir, RunOptions(model="test", cassette=recorder))
    recorder.save()

    options = RunOptions(model="openai/gpt-4o", cassette=Cassette.replay(path), env={})
    assert comparable(await run_turn(agent_dir, options)) == comparable(recorded)


def test_the_cassette_comes_from_the_command_line_then_the_environment_then_agent_yaml(
    tmp_path: Path,
) -> None:
    (tmp_path / "cassettes").mkdir()
    (tmp_path / "cassettes" / "agent.yaml").write_text("version: 1\n", encoding="utf-8")
    (tmp_path / "env.yaml").write_text("version: 1\n", encoding="utf-8")
    in_yaml = ExecutionSettings(replay="cassettes/agent.yaml")

    chosen = Cassette.from_settings(in_yaml, tmp_path, {})
    assert chosen is not None and chosen.replaying
    assert chosen.path == tmp_path / "cassettes" / "agent.yaml"

    env = {"HOLODECK_RECORD": str(tmp_path / "from-env.yaml")}
    chosen = Cassette.from_settings(in_yaml, tmp_path, env)
    assert chosen is not None and chosen.recording and chosen.path.name == "from-env.yaml"

    chosen = Cassette.from_settings(in_yaml, tmp_path, env, replay_path=tmp_path / "env.yaml")
    assert chosen is not None and chosen.replaying and chosen.path.name == "env.yaml"

    assert Cassette.from_settings(ExecutionSettings(), tmp_path, {}) is None
    assert Cassette.from_settings(None, tmp_path, {"HOLODECK_REPLAY": ""}) is None
    with pytest.raises(CassetteError, match="both set"):
        Cassette.from_settings(None, tmp_path, {"HOLODECK_RECORD": "a", "HOLODECK_REPLAY": "b"})


async def test_agent_yaml_and_environment_settings_choose_the_cassette(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from holodeck.config.loader import load_agent
    from holodeck.runtime import Agent

    root = tmp_path / "agent"
    root.mkdir()
    (root / "agent.yaml").write_text(
        "name: a\nmodel: {provider: openai, name: gpt-4o}\ninstructions: {inline: hi}\n"
        "execution: {record: cassettes/run.yaml}\n",
        encoding="utf-8",
    )
    agent = Agent(load_agent(root), RunOptions(model="test"))
    final = await agent.answer("hello")
    recorded = root / "cassettes" / "run.yaml"
    assert recorded.is_file()  # saved after the turn, no explicit save needed
    monkeypatch.setenv("HOLODECK_REPLAY", str(recorded))
    replayed = Agent(load_agent(root), RunOptions(model="openai/gpt-4o"))  # env beats agent.yaml
    assert replayed.options.cassette is not None and not replayed.options.cassette.recording
    assert (await replayed.answer("hello")).text == final.text


async def test_each_save_appends_what_is_new_and_leaves_the_file_alone(
    agent_dir: Path, tmp_path: Path
) -> None:
    path = tmp_path / "run.yaml"
    recorder = Cassette.record(path)
    options = RunOptions(model="test", cassette=recorder)
    first = await run_turn(agent_dir, options, "first question")  # saved after the turn
    # a save that rewrote the file would undo this change to its first line
    path.write_bytes(path.read_bytes().replace(b"# HoloDeck cassette", b"# HOLODECK CASSETTE"))
    written = path.read_bytes()

    second = await run_turn(agent_dir, options, "second question")
    grown = path.read_bytes()
    assert grown.startswith(written) and len(grown) > len(written)
    assert b"second question" in grown[len(written) :]
    assert b"first question" not in grown[len(written) :]

    stat = path.stat()
    assert recorder.save() == 0 and await recorder.asave() == 0  # nothing new: no write
    assert path.read_bytes() == grown and path.stat().st_mtime_ns == stat.st_mtime_ns

    replayer = Cassette.replay(path)
    replayed = RunOptions(model="openai/gpt-4o", cassette=replayer, env={})
    assert comparable(await run_turn(agent_dir, replayed, "first question")) == comparable(first)
    assert comparable(await run_turn(agent_dir, replayed, "second question")) == comparable(second)


RECORDS_THEN_HANGS = """
import asyncio, sys
from holodeck.llm.cassette import Cassette
from holodeck.runtime import Agent
from holodeck import RunOptions
from holodeck.config.loader import load_agent

async def main() -> None:
    options = RunOptions(model="test", cassette=Cassette.record(sys.argv[2]))
    agent = Agent(load_agent(sys.argv[1]), options)
    for prompt in ("first question", "second question"):
        print((await agent.answer(prompt)).text, flush=True)
    print("ready", flush=True)
    await asyncio.sleep(120)  # killed here: no exit handler, no last save

asyncio.run(main())
"""


async def test_a_killed_run_replays_the_turns_it_recorded(write: Write, tmp_path: Path) -> None:
    root = write({"agent.yaml": AGENT.split("  - type: prompt")[0], "tools.py": TOOLS})
    path = tmp_path / "killed.yaml"
    child = subprocess.Popen(
        [sys.executable, "-c", RECORDS_THEN_HANGS, str(root), str(path)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None
        answers = [child.stdout.readline().strip() for _ in range(3)]
        assert answers[-1] == "ready"
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
    assert child.returncode == -signal.SIGKILL

    # and the kill came in the middle of a third save: half of one is on the file
    text = path.read_text(encoding="utf-8")
    last_save = text[text.rindex("# saved", 0, len(text) - 1) :].split("\n", 1)[1]
    path.write_text(text + last_save[: len(last_save) // 2], encoding="utf-8")

    options = RunOptions(model="openai/gpt-4o", cassette=Cassette.replay(path), env={})
    agent = Agent(load_agent(root), options)
    replayed = [(await agent.answer(p)).text for p in ("first question", "second question")]
    assert replayed == answers[:2]
    with pytest.raises(CassetteMiss):
        await agent.answer("third question")


# Written by the version that rewrote the whole file on each save (the answer edited, so
# only this file can give it).
WHOLE_FILE_CASSETTE = """\
# HoloDeck cassette: model exchanges recorded with --record, replayed offline with
# --replay. `key` hashes the request; a request that changes no longer matches.
version: 1
interactions:
  - key: da5bb6a3f7a7d2ff
    model: test
    request:
      user: hello
      tools: [weather]
    response:
      parts:
        - tool_name: weather
          args: '{"city": "a"}'
          tool_call_id: test-call-0
          part_kind: tool-call
      usage:
        input_tokens: 50
        output_tokens: 4
      model_name: holodeck-test
      state: complete
  - key: '856e187670739559'
    model: test
    request:
      user: hello
      after: result of weather
      tools: [weather]
    response:
      parts:
        - content: |-
            Sunny in a,
            as recorded.
          part_kind: text
      usage:
        input_tokens: 50
        output_tokens: 3
      model_name: holodeck-test
      state: complete
"""


async def test_a_cassette_written_whole_still_replays(write: Write, tmp_path: Path) -> None:
    root = write({"agent.yaml": AGENT.split("  - type: prompt")[0], "tools.py": TOOLS})
    path = tmp_path / "old.yaml"
    path.write_text(WHOLE_FILE_CASSETTE, encoding="utf-8")
    options = RunOptions(model="openai/gpt-4o", cassette=Cassette.replay(path), env={})
    events = await run_turn(root, options, "hello")
    final = events[-1]
    assert isinstance(final, FinalMessage) and final.text == "Sunny in a,\nas recorded."
    assert [c.result for c in final.tool_calls] == ["sunny in a"]
