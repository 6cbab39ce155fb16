"""TypeScript tools: schemas read from the TypeScript types, calls run in one Node.js
process per toolset (sync, async, errors, params, timeouts, concurrency), the process's
lifetime, and a whole agent turn through the runtime with the offline test model."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai import RunContext
from pydantic_ai.models.test import TestModel
from pydantic_ai.toolsets import AbstractToolset
from pydantic_ai.usage import RunUsage

from conftest import Write
from holodeck import RunOptions
from holodeck.config.loader import load_agent
from holodeck.runtime import Agent, Event, FinalMessage, ToolCallFinished
from holodeck.runtime.toolsets import TypeScriptToolset, typescript_toolset
from holodeck.spec.models.tools import TypeScriptTool
from holodeck.tools.errors import ToolLoadError
from holodeck.tools.typescript import TypeScriptRunner, TypeScriptToolError, typescript_package
from holodeck.tools.typescript import _install as ts_tools

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(shutil.which("node") is None, reason="Node.js is not installed"),
]

CONFIG = "spec_version: 1\nname: trader\nllm:\n  model: openai/gpt-4o\n"

STOCKS = """
const PRICES: Record<string, number> = { ACME: 101.5, INIT: 7 };

/**
 * Quote a stock.
 *
 * Prices are delayed by 15 minutes.
 * @param ticker The ticker symbol, e.g. ACME.
 * @param currency Currency of the price.
 */
export async function quote(ticker: string, currency?: "USD" | "EUR"): Promise<{ price: number }> {
  await new Promise((resolve) => setTimeout(resolve, 5));
  const price = PRICES[ticker.toUpperCase()] ?? ticker.length;
  return { price: currency === "EUR" ? price * 2 : price };
}
"""

PORTFOLIO = """
interface Holding {
  /** Ticker symbol. */
  ticker: string;
  shares: number;
  tags?: string[];
}

/**
 * Value a portfolio.
 * @param holdings What is held.
 * @param options How to value it.
 */
export function value(
  holdings: Holding[],
  options: { currency: "USD" | "EUR"; round?: boolean },
  params: { rates: Record<string, number> },
): { total: number; currency: string } {
  const rate = params.rates[options.currency];
  const total = holdings.reduce((sum, h) => sum + h.shares * rate, 0);
  return { total: options.round ? Math.round(total) : total, currency: options.currency };
}

/** What the tool was configured with. */
export function settings(params: Record<string, unknown>, verbose = false) {
  return { params, verbose };
}
"""

BEHAVIOUR = """
import { helper } from "./helper";

let waiting: Array<() => void> = [];

export function add(a: number, b: number): number {
  console.log("logs must not disturb the protocol");
  return helper(a + b);
}

export function fail(reason: string): never {
  throw new RangeError(`no such ticker: ${reason}`);
}

export async function failLater(): Promise<string> {
  await Promise.resolve();
  throw new Error("async failure");
}

export function never(): Promise<string> {
  return new Promise(() => {});
}

export function spin(): number {
  for (;;) {}
}

/** Resolves once `count` calls are waiting together: only concurrent calls finish. */
export function rendezvous(count: number, tag: string): Promise<string> {
  return new Promise((resolve) => {
    waiting.push(() => resolve(tag));
    if (waiting.length >= count) {
      const all = waiting;
      waiting = [];
      all.forEach((release) => release());
    }
  });
}

export function pid(): number {
  return process.pid;
}

export function spawnChild(): number {
  const { spawn } = require("child_process");
  const child = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], { stdio: "ignore" });
  return child.pid;
}

export function lookup({ ticker, limit = 3 }: { ticker: string; limit?: number }) {
  return { ticker, limit };
}

export function odd(callback: (x: number) => void, table: Map<string, number>, anything: unknown, when: Date) {
  return "ok";
}
"""

HELPER = "export function helper(x: number): number {\n  return x;\n}\n"


@pytest.fixture(scope="session")
def node_modules(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A node_modules with `typescript`: the checkout's (`make node`) or one installed once."""
    configured = os.environ.get(ts_tools.NODE_MODULES_ENV)
    if configured:
        return Path(configured)
    bundled = ts_tools._bundled_node_modules()
    if bundled is not None and (bundled / "typescript" / "package.json").is_file():
        return bundled
    prefix = tmp_path_factory.mktemp("node")
    ts_tools._installed_typescript(prefix)
    return prefix / "node_modules"


@pytest.fixture(autouse=True)
def _typescript_available(node_modules: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ts_tools.NODE_MODULES_ENV, str(node_modules))


@pytest.fixture
def image(write: Write) -> Path:
    return write(
        {
            "config.yaml": CONFIG + "params:\n  rates: {USD: 1.0, EUR: 0.5}\n  desk: london\n",
            "tools/typescript/stocks.ts": STOCKS,
            "tools/typescript/portfolio.ts": PORTFOLIO,
        }
    )


@pytest.fixture
def behaviour(write: Write) -> Path:
    return write({"tools/behaviour.ts": BEHAVIOUR, "tools/helper.ts": HELPER})


def ctx() -> RunContext[None]:
    return RunContext(deps=None, model=TestModel(), usage=RunUsage(), max_retries=1)


def tool(function: str, timeout: float | None = None, name: str | None = None) -> TypeScriptTool:
    return TypeScriptTool(
        name=name or function, file="tools/behaviour.ts", function=function, timeout=timeout
    )


def toolset_of(root: Path, *tools: TypeScriptTool, params: dict[str, Any] | None = None) -> Any:
    """A toolset that lives as long as it is used (an agent's keeps Node.js between turns)."""
    return TypeScriptToolset(TypeScriptRunner(list(tools), root, params or {}))


async def call(toolset: Any, name: str, args: dict[str, Any] | None = None) -> Any:
    context = ctx()
    tools = await toolset.get_tools(context)
    return await toolset.call_tool(name, args or {}, context, tools[name])


def gone(pid: int) -> bool:
    """The process no longer runs (a zombie waiting for its parent counts as gone)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state in ("Z", "X")


def wait_until(condition: Callable[[], bool], deadline_s: float = 10.0) -> bool:
    """Poll `condition` until it holds; False if it still does not at the deadline."""
    deadline = time.monotonic() + deadline_s
    while not condition():
        if time.monotonic() > deadline:
            return False
        threading.Event().wait(0.01)  # a poll interval, not a guess at how long it takes
    return True


def wait_until_gone(pid: int) -> bool:
    return wait_until(lambda: gone(pid))


# ---------------------------------------------------------------------------------------
# Schemas


async def test_schema_comes_from_the_typescript_types(image: Path) -> None:
    spec = load_agent(image)
    # descriptions left out: here they come from the compiler's reading of the JSDoc
    undescribed = [
        t.model_copy(update={"description": None})
        for t in spec.tools
        if isinstance(t, TypeScriptTool)
    ]
    toolset = typescript_toolset(undescribed, spec.root, spec.params)
    async with toolset:
        tools = await toolset.get_tools(ctx())
    assert set(tools) == {"stocks", "portfolio_value", "portfolio_settings"}

    stocks = tools["stocks"].tool_def
    assert stocks.description == "Quote a stock."
    assert stocks.parameters_json_schema == {
        "type": "object",
        "properties": {
            "ticker": {"type": "string", "description": "The ticker symbol, e.g. ACME."},
            "currency": {
                "type": "string",
                "enum": ["USD", "EUR"],
                "description": "Currency of the price.",
            },
        },
        "required": ["ticker"],
        "additionalProperties": False,
    }

    value = tools["portfolio_value"].tool_def
    assert value.description == "Value a portfolio."
    schema = value.parameters_json_schema
    assert list(schema["properties"]) == ["holdings", "options"]  # `params` is hidden
    assert schema["required"] == ["holdings", "options"]
    holdings = schema["properties"]["holdings"]
    assert holdings["type"] == "array" and holdings["description"] == "What is held."
    assert holdings["items"] == {
        "type": "object",
        "properties": {
            "ticker": {"type": "string", "description": "Ticker symbol."},
            "shares": {"type": "number"},
            "tags": {"type": "array", "items": {"type": "string"}},
        },
        "required": ["ticker", "shares"],
        "additionalProperties": False,
    }
    options = schema["properties"]["options"]
    assert options["properties"]["currency"] == {"type": "string", "enum": ["USD", "EUR"]}
    assert options["properties"]["round"] == {"type": "boolean"}
    assert options["required"] == ["currency"]

    settings = tools["portfolio_settings"].tool_def.parameters_json_schema
    assert settings["properties"] == {"verbose": {"type": "boolean"}}  # a default: optional
    assert "required" not in settings


async def test_declared_description_wins_and_jsdoc_fills_in(image: Path) -> None:
    stocks = {"file": "tools/typescript/stocks.ts", "function": "quote"}
    toolset = typescript_toolset(
        [
            TypeScriptTool(name="mine", description="My own words.", **stocks),
            TypeScriptTool(name="bare", **stocks),
        ],
        image,
        {},
    )
    tools = await toolset.get_tools(ctx())
    assert tools["mine"].tool_def.description == "My own words."
    assert tools["bare"].tool_def.description == "Quote a stock."  # first paragraph only


async def test_destructured_parameter_and_untranslatable_types(behaviour: Path) -> None:
    toolset = toolset_of(behaviour, tool("lookup"), tool("odd"))
    async with toolset:
        tools = await toolset.get_tools(ctx())
        assert await call(toolset, "lookup", {"ticker": "ACME"}) == {"ticker": "ACME", "limit": 3}
    lookup = tools["lookup"].tool_def.parameters_json_schema
    assert lookup["properties"] == {"ticker": {"type": "string"}, "limit": {"type": "number"}}
    assert lookup["required"] == ["ticker"]
    odd = tools["odd"].tool_def.parameters_json_schema["properties"]
    assert odd["callback"] == {} and odd["table"] == {} and odd["anything"] == {}
    assert odd["when"] == {"type": "string", "format": "date-time"}


async def test_broken_files_and_missing_functions_name_the_file(write: Write) -> None:
    root = write({"bad.ts": "export function f(: number {\n", "ok.ts": "export const x = 1;\n"})
    broken = typescript_toolset([TypeScriptTool(name="f", file="bad.ts", function="f")], root, {})
    with pytest.raises(ToolLoadError, match=r"bad\.ts: cannot be read as TypeScript: line 1"):
        await broken.get_tools(ctx())
    missing = typescript_toolset([TypeScriptTool(name="g", file="ok.ts", function="g")], root, {})
    with pytest.raises(ToolLoadError, match=r"ok\.ts: exports no function `g`"):
        await missing.get_tools(ctx())
    with pytest.raises(ToolLoadError, match=r"nowhere\.ts: TypeScript file not found"):
        typescript_toolset([TypeScriptTool(name="h", file="nowhere.ts", function="h")], root, {})


def test_node_missing_from_path_is_a_clear_error(
    behaviour: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(ToolLoadError, match=r"TypeScript tools need Node\.js 18\+ on PATH"):
        toolset_of(behaviour, tool("add"))


def test_bad_node_modules_setting_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ToolLoadError, match="holds no `typescript` package"):
        typescript_package({ts_tools.NODE_MODULES_ENV: str(tmp_path)})


# ---------------------------------------------------------------------------------------
# Calls


async def test_sync_and_async_functions_return_their_values(write: Write) -> None:
    root = write({"stocks.ts": STOCKS, "tools/behaviour.ts": BEHAVIOUR, "tools/helper.ts": HELPER})
    quote = TypeScriptTool(name="stocks", file="stocks.ts", function="quote")
    toolset = toolset_of(root, quote, tool("add"))  # two files, one process
    async with toolset:
        assert await call(toolset, "stocks", {"ticker": "acme"}) == {"price": 101.5}
        assert await call(toolset, "stocks", {"ticker": "acme", "currency": "EUR"}) == {
            "price": 203.0
        }
        # an optional parameter sent as null gets its default
        assert await call(toolset, "stocks", {"ticker": "init", "currency": None}) == {"price": 7}
        # a sync function importing ./helper.ts and logging to stdout
        assert await call(toolset, "add", {"a": 2, "b": 3}) == 5


async def test_thrown_errors_surface_with_the_javascript_message(behaviour: Path) -> None:
    toolset = toolset_of(behaviour, tool("fail"), tool("failLater"), tool("add"))
    async with toolset:
        with pytest.raises(TypeScriptToolError, match=r"^no such ticker: XYZ$") as caught:
            await call(toolset, "fail", {"reason": "XYZ"})
        assert caught.value.js_name == "RangeError"
        assert "behaviour.ts" in caught.value.stack
        with pytest.raises(TypeScriptToolError, match=r"^async failure$"):
            await call(toolset, "failLater")
        assert await call(toolset, "add", {"a": 1, "b": 1}) == 2  # the process lives on


async def test_params_reach_the_function_and_stay_out_of_the_schema(image: Path) -> None:
    spec = load_agent(image)
    toolset = typescript_toolset(
        [t for t in spec.tools if isinstance(t, TypeScriptTool)], spec.root, spec.params
    )
    async with toolset:
        tools = await toolset.get_tools(ctx())
        assert "params" not in tools["portfolio_settings"].tool_def.parameters_json_schema.get(
            "properties", {}
        )
        settings = await call(toolset, "portfolio_settings", {"verbose": True})
        assert settings == {
            "params": {"rates": {"USD": 1.0, "EUR": 0.5}, "desk": "london"},
            "verbose": True,
        }
        holdings = [{"ticker": "ACME", "shares": 3}, {"ticker": "INIT", "shares": 2}]
        valued = await call(
            toolset, "portfolio_value", {"holdings": holdings, "options": {"currency": "EUR"}}
        )
        assert valued == {"total": 2.5, "currency": "EUR"}


async def test_a_missing_required_argument_asks_the_model_again(image: Path) -> None:
    from pydantic_ai import ModelRetry

    toolset = typescript_toolset(
        [TypeScriptTool(name="stocks", file="tools/typescript/stocks.ts", function="quote")],
        image,
        {},
    )
    with pytest.raises(ModelRetry, match="ticker"):
        await call(toolset, "stocks", {"currency": "USD"})


async def test_concurrent_calls_share_one_process(behaviour: Path) -> None:
    toolset = toolset_of(behaviour, tool("rendezvous", timeout=20), tool("pid"))
    async with toolset:
        tags = [f"call-{n}" for n in range(8)]
        # each call resolves only once all 8 wait together: they must overlap
        results = await asyncio.gather(
            *(call(toolset, "rendezvous", {"count": len(tags), "tag": t}) for t in tags)
        )
        assert results == tags
        pids = await asyncio.gather(*(call(toolset, "pid") for _ in range(5)))
        assert set(pids) == {toolset.process_id}


async def test_a_timeout_abandons_a_call_that_never_finishes(behaviour: Path) -> None:
    toolset = toolset_of(behaviour, tool("never", timeout=0.3), tool("pid"))
    async with toolset:
        first = await call(toolset, "pid")
        with pytest.raises(
            TimeoutError, match=r"`never` \(tools/behaviour\.ts\) did not finish within 0\.3 s"
        ):
            await call(toolset, "never")
        assert await call(toolset, "pid") == first  # still responsive: kept


async def test_a_timeout_kills_a_blocked_process_and_the_next_call_restarts_it(
    behaviour: Path,
) -> None:
    toolset = toolset_of(behaviour, tool("spin", timeout=0.3), tool("add"))
    async with toolset:
        await call(toolset, "add", {"a": 1, "b": 2})
        blocked = toolset.process_id
        assert blocked is not None
        with pytest.raises(TimeoutError, match=r"did not finish within 0\.3 s"):
            await call(toolset, "spin")
        assert wait_until_gone(blocked)
        assert await call(toolset, "add", {"a": 1, "b": 2}) == 3
        assert toolset.process_id not in (None, blocked)


async def test_a_dead_process_is_restarted(behaviour: Path) -> None:
    toolset = toolset_of(behaviour, tool("pid"))
    async with toolset:
        first = await call(toolset, "pid")
        os.kill(first, signal.SIGKILL)  # the test's own child
        assert wait_until(lambda: toolset.process_id is None)  # noticed: its stdout closed
        second = await call(toolset, "pid")
        assert second != first and second == toolset.process_id


# ---------------------------------------------------------------------------------------
# The process's lifetime


async def test_the_process_starts_lazily_and_is_gone_after_the_toolset_exits(
    behaviour: Path,
) -> None:
    toolset = toolset_of(behaviour, tool("pid"), tool("spawnChild"))
    async with toolset:
        assert toolset.process_id is None  # nothing runs before the first use
        pid = await call(toolset, "pid")
        assert pid == toolset.process_id
        grandchild = await call(toolset, "spawnChild")
        assert not gone(grandchild)
    assert toolset.process_id is None
    assert gone(pid)  # killed and reaped before the exit returned
    assert wait_until_gone(grandchild)  # what a tool started goes with it


async def test_nested_entries_keep_the_process_until_the_last_exit(behaviour: Path) -> None:
    toolset = toolset_of(behaviour, tool("pid"))
    async with toolset:
        async with toolset:
            pid = await call(toolset, "pid")
        assert toolset.process_id == pid
    assert gone(pid)


async def test_use_outside_a_context_leaves_no_process(behaviour: Path) -> None:
    toolset = toolset_of(behaviour, tool("pid"))
    pid = await call(toolset, "pid")
    assert toolset.process_id is None
    assert gone(pid)


ABANDON = """
import asyncio, os, sys
from pathlib import Path
from pydantic_ai import RunContext
from pydantic_ai.models.test import TestModel
from pydantic_ai.usage import RunUsage
from holodeck.spec.models.tools import TypeScriptTool
from holodeck.runtime.toolsets import typescript_toolset

async def main():
    tool = TypeScriptTool(name="pid", file="tools/behaviour.ts", function="pid")
    toolset = typescript_toolset([tool], Path(sys.argv[1]), {})
    await toolset.__aenter__()  # never exited
    ctx = RunContext(deps=None, model=TestModel(), usage=RunUsage())
    tools = await toolset.get_tools(ctx)
    print(await toolset.call_tool("pid", {}, ctx, tools["pid"]), flush=True)
    if sys.argv[2] == "crash":
        os._exit(0)  # no clean-up at all: Node.js sees its stdin close

asyncio.run(main())
"""


@pytest.mark.parametrize("ending", ["exit", "crash"])
def test_no_process_outlives_python(behaviour: Path, tmp_path: Path, ending: str) -> None:
    script = tmp_path / "abandon.py"
    script.write_text(ABANDON)
    done = subprocess.run(
        [sys.executable, str(script), str(behaviour), ending],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    pid = int(done.stdout.split()[-1])
    assert wait_until_gone(pid)


# ---------------------------------------------------------------------------------------
# Through the runtime


def _typescript_toolsets(agent: Agent) -> list[TypeScriptToolset]:
    found: list[TypeScriptToolset] = []

    def visit(toolset: AbstractToolset[Any]) -> None:
        if isinstance(toolset, TypeScriptToolset):
            found.append(toolset)

    for toolset in agent._agent.toolsets:
        toolset.apply(visit)
    return found


async def test_an_agent_turn_calls_the_typescript_tools(image: Path) -> None:
    agent = Agent(load_agent(image), RunOptions(model="test"))
    events: list[Event] = [event async for event in agent.run("What does ACME cost? /call *")]
    calls = {e.name: e for e in events if isinstance(e, ToolCallFinished)}
    assert set(calls) == {"stocks", "portfolio_value", "portfolio_settings"}
    assert all(c.ok for c in calls.values()), [c.error for c in calls.values()]
    stocks = calls["stocks"]
    ticker = stocks.args["ticker"]  # whatever the test model chose
    price = {"ACME": 101.5, "INIT": 7}.get(ticker.upper(), len(ticker))
    assert stocks.result == {"price": price * (2 if stocks.args.get("currency") == "EUR" else 1)}
    assert calls["portfolio_settings"].result["params"] == {
        "rates": {"USD": 1.0, "EUR": 0.5},
        "desk": "london",
    }
    final = events[-1]
    assert isinstance(final, FinalMessage) and "stocks:" in final.text
    toolsets = _typescript_toolsets(agent)
    assert toolsets and all(t.process_id is not None for t in toolsets)  # kept for next turn
    await agent.aclose()
    assert all(t.process_id is None for t in toolsets)


# ---------------------------------------------------------------------------------------
# Installing the compiler


@pytest.mark.slow
def test_typescript_is_installed_once_under_holodeck_home(
    isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if shutil.which("npm") is None:
        pytest.skip("npm is not installed")
    monkeypatch.delenv(ts_tools.NODE_MODULES_ENV)
    monkeypatch.setattr(ts_tools, "_bundled_node_modules", lambda: None)
    installs: list[str] = []
    real_install = ts_tools._npm_install

    def counted(npm: str, prefix: Path, requirement: str) -> None:
        installs.append(requirement)
        real_install(npm, prefix, requirement)

    monkeypatch.setattr(ts_tools, "_npm_install", counted)
    found: list[Path] = []
    errors: list[BaseException] = []

    def resolve() -> None:
        try:
            found.append(typescript_package())
        except BaseException as exc:  # reported below
            errors.append(exc)

    started = time.perf_counter()
    threads = [threading.Thread(target=resolve) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=600)
    elapsed = time.perf_counter() - started
    assert not errors, errors
    expected = isolated_home / "node" / "node_modules" / "typescript"
    assert found == [expected] * 3
    assert installs == [f"typescript@{ts_tools.typescript_version_spec()}"]  # one install only
    assert typescript_package() == expected  # reused afterwards
    print(f"first-run install of typescript took {elapsed:.1f} s")


def test_an_agents_node_process_lasts_across_turns_until_closed(image: Path) -> None:
    import asyncio

    from holodeck import RunOptions
    from holodeck.config.loader import load_agent
    from holodeck.runtime import Agent

    agent = Agent(load_agent(image), RunOptions(model="test"))

    def node_pid() -> int | None:
        found: list[int | None] = []
        agent._toolsets[0].apply(
            lambda t: found.append(t.process_id) if hasattr(t, "process_id") else None
        )
        return found[0]

    async def two_turns() -> tuple[int | None, int | None]:
        async with agent:
            await agent.answer("one")
            first = node_pid()
            await agent.answer("two")
            return first, node_pid()

    first, second = asyncio.run(two_turns())
    assert first is not None
    assert second == first  # the same Node.js process served both turns
    assert node_pid() is None  # and it stopped with the agent
