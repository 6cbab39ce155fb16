"""What tracing costs a turn: the runtime benchmark's turn (a scripted zero-latency model
streaming one call of one async tool, then a short answer) with observability off, and
with it on, exporting every span, metric and log over OTLP/HTTP to a local receiver.

Run: .venv/bin/python bench/tracing_overhead.py [turns]
Target: the traced turn within 1.10x the untraced one. Also prints how long importing
the OpenTelemetry SDK and exporters takes (what observability off never pays).
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from holodeck import RunOptions
from holodeck.config.loader import load_agent
from holodeck.observability import shutdown_shared
from holodeck.runtime import Agent, FinalMessage
from otlp_receiver import otlp_http
from runtime_overhead import (
    AGENT_YAML,
    INSTRUCTIONS,
    TOOLS_PY,
    WARMUP,
    bare_turn,
    holodeck_turn,
    lookup,
    medians_ms,
    scripted_model,
)
from test_scale import model_server

IMPORTS = (
    "import opentelemetry.sdk.trace, opentelemetry.sdk.metrics, opentelemetry.sdk._logs, "
    "opentelemetry.exporter.otlp.proto.http.trace_exporter, "
    "opentelemetry.exporter.otlp.proto.grpc.trace_exporter"
)


def import_ms() -> float:
    """Median wall time of importing the SDK and exporters in a fresh interpreter that has
    already imported pydantic-ai (as a HoloDeck run has), over 5 runs."""
    code = (
        "import time, pydantic_ai\n"
        f"t = time.perf_counter(); {IMPORTS}\n"
        "print((time.perf_counter() - t) * 1000)"
    )
    times = sorted(
        float(
            subprocess.run(
                [sys.executable, "-c", code], capture_output=True, text=True, check=True
            ).stdout
        )
        for _ in range(5)
    )
    return times[2]


def instrumented_bare_turn() -> Any:
    """The runtime benchmark's bare pydantic-ai turn, instrumented with an SDK that
    exports nothing: what pydantic-ai's own instrumentation costs."""
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.trace import TracerProvider
    from pydantic_ai import Agent as PydanticAgent
    from pydantic_ai import InstrumentationSettings, Tool

    agent: PydanticAgent[None, str] = PydanticAgent(
        scripted_model(1),
        instructions=INSTRUCTIONS,
        tools=[Tool(lookup, takes_ctx=False, docstring_format="auto")],
    )
    agent.instrument = InstrumentationSettings(
        tracer_provider=TracerProvider(), meter_provider=MeterProvider(), include_content=False
    )

    async def turn() -> None:
        async with agent.run_stream_events("look it up") as stream:
            async for _ in stream:
                pass

    return turn


def http_turn(root: Path) -> Any:
    """A turn of the agent at `root` (a model over HTTP, no tools)."""
    agent = Agent(load_agent(root), RunOptions(env={"OPENAI_API_KEY": "sk-bench"}))

    async def turn() -> None:
        final = None
        async for event in agent.run("Where is order 1?"):
            final = event
        assert isinstance(final, FinalMessage) and "shipped" in final.text

    return turn


async def over_http(directory: Path, endpoint: str, turns: int) -> tuple[float, float]:
    """Median ms per turn against the 200 ms model server, tracing off and on."""
    with model_server() as port:
        model = f"{{provider: openai, name: gpt-4o-mini, endpoint: 'http://127.0.0.1:{port}/v1'}}"
        head = f"name: shop\nmodel: {model}\ninstructions: {{inline: Answer.}}\n"
        traced = "observability:\n  enabled: true\n  exporters:\n    otlp:\n"
        traced += f"      endpoint: {endpoint}\n      protocol: http\n"
        roots = Path(directory, "http-off"), Path(directory, "http-on")
        for root, extra in zip(roots, ("", traced), strict=True):
            root.mkdir()
            (root / "agent.yaml").write_text(head + extra, encoding="utf-8")
        return await medians_ms(http_turn(roots[0]), http_turn(roots[1]), turns)


async def main() -> None:
    turns = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    warnings.simplefilter("ignore")
    with tempfile.TemporaryDirectory() as directory, otlp_http() as receiver:
        off, on = Path(directory, "off"), Path(directory, "on")
        for root in (off, on):
            root.mkdir()
            (root / "tools.py").write_text(TOOLS_PY, encoding="utf-8")
        (off / "agent.yaml").write_text(AGENT_YAML, encoding="utf-8")
        traced = AGENT_YAML + (
            "observability:\n  enabled: true\n  exporters:\n    otlp:\n"
            f"      endpoint: {receiver.endpoint}\n      protocol: http\n"
        )
        (on / "agent.yaml").write_text(traced, encoding="utf-8")
        untraced_ms, traced_ms = await medians_ms(
            holodeck_turn(1, off), holodeck_turn(1, on), turns
        )
        await shutdown_shared()
        exported = len(receiver.spans)
        # the share that is pydantic-ai's own instrumentation, on its bare agent
        bare_off, bare_on = await medians_ms(bare_turn(1), instrumented_bare_turn(), turns)
        http_off, http_on = await over_http(Path(directory), receiver.endpoint, 30)
        await shutdown_shared()
    ratio = traced_ms / untraced_ms
    print(f"median ms per turn with one tool call, {turns} turns after {WARMUP} warm-up turns")
    print(f"tracing off: {untraced_ms:.3f} ms   on (OTLP/HTTP): {traced_ms:.3f} ms")
    print(f"traced turn: {ratio:.2f}x the untraced one (target <= 1.10x)")
    print(f"spans exported: {exported}; extra per turn: {traced_ms - untraced_ms:.3f} ms")
    print(
        "pydantic-ai's instrumentation alone, on its bare agent (in-memory SDK, no export): "
        f"{bare_on / bare_off:.2f}x ({bare_off:.3f} -> {bare_on:.3f} ms)"
    )
    print(
        "a turn against a model over HTTP answering in 200 ms (30 turns): "
        f"off {http_off:.1f} ms, on {http_on:.1f} ms = {http_on / http_off:.3f}x"
    )
    print(f"importing the OpenTelemetry SDK and OTLP exporters: {import_ms():.0f} ms")


if __name__ == "__main__":
    asyncio.run(main())
