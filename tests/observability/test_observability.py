"""OpenTelemetry for HoloDeck runs: the real SDK and exporters send to a local OTLP
receiver (HTTP and gRPC) started here, and what arrives is decoded and checked."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from holodeck import Agent, Run, RunOptions
from holodeck.config.loader import load_agent
from holodeck.errors import HoloDeckError
from holodeck.observability import shutdown_shared, telemetry_for
from otlp_receiver import Received, Span, otlp_grpc, otlp_http
from yaml_dump import dump

DEMO = Path(__file__).resolve().parents[1] / "mcp_servers" / "demo.py"
CALLS = ["lookup", "broken", "demo_echo", "helper"]
SECRET = "sunny in"  # in the lookup tool's result; the redaction pattern's target

TOOLS_PY = '''
def lookup(city: str) -> str:
    """Weather for a city."""
    return f"sunny in {city}"


def broken(city: str) -> str:
    """Always fails."""
    raise RuntimeError("the weather desk is closed")
'''


def write_agent(root: Path, observability: dict[str, Any] | None, **extra: Any) -> Path:
    """An agent with a function tool, a failing one, an MCP server and a sub-agent."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "tools.py").write_text(TOOLS_PY)
    (root / "helper").mkdir(exist_ok=True)
    (root / "helper" / "agent.yaml").write_text(
        dump({"name": "helper", "model": {"provider": "test"}, "instructions": {"inline": "Help."}})
    )
    agent: dict[str, Any] = {
        "name": "top",
        "model": {"provider": "test"},
        "instructions": {"inline": "You answer."},
        "tools": [
            {"type": "function", "name": "lookup", "file": "tools.py", "function": "lookup"},
            {"type": "function", "name": "broken", "file": "tools.py", "function": "broken"},
            {
                "type": "mcp",
                "name": "demo",
                "command": sys.executable,
                "args": [str(DEMO)],
                "tools": ["echo"],
            },
            {"type": "agent", "name": "helper", "path": "helper/agent.yaml"},
        ],
        **extra,
    }
    if observability is not None:
        agent["observability"] = observability
    (root / "agent.yaml").write_text(dump(agent))
    return root / "agent.yaml"


def otlp(endpoint: str, protocol: str, **traces: Any) -> dict[str, Any]:
    return {
        "enabled": True,
        "service_name": "weather-desk",
        "traces": {"schedule_delay_millis": 50, **traces},
        "metrics": {"export_interval_ms": 100},
        "exporters": {"otlp": {"endpoint": endpoint, "protocol": protocol, "timeout_ms": 2000}},
    }


@pytest.fixture(autouse=True)
def _own_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    for name in list(os.environ):
        if name.startswith("OTEL_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("HOLODECK_HOME", str(tmp_path / "home"))
    yield
    asyncio.run(shutdown_shared())


async def one_turn(path: Path) -> tuple[Agent, float]:
    """The agent after one turn, and how long the turn took."""
    agent, elapsed, _ = await timed_turn(path)
    return agent, elapsed


async def timed_turn(path: Path) -> tuple[Agent, float, float]:
    """The agent, and how long one turn and then closing the agent took."""
    agent = Agent(load_agent(path), RunOptions(model="test"))
    await agent.start()
    clock = time.perf_counter()
    with agent.options.offline.expecting(
        CALLS
    ):  # what a test case expecting CALLS has the offline model call
        final = await agent.answer("Weather in Oslo?")
    elapsed = time.perf_counter() - clock
    clock = time.perf_counter()
    await agent.aclose()
    assert "lookup: sunny in" in final.text
    return agent, elapsed, time.perf_counter() - clock


def by_name(spans: list[Span], name: str) -> Span:
    found = [s for s in spans if s.name == name]
    assert len(found) == 1, f"{name}: {[s.name for s in spans]}"
    return found[0]


def children(spans: list[Span], parent: Span) -> list[str]:
    return sorted(s.name for s in spans if s.parent_id == parent.span_id)


def check_turn_tree(received: Received) -> list[Span]:
    received.wait_for(lambda r: any(s.name == "invoke_agent top" for s in r.spans))
    spans = received.spans
    top = by_name(spans, "invoke_agent top")
    assert top.parent_id == ""
    assert top.resource["service.name"] == "weather-desk"
    assert children(spans, top) == [
        "chat holodeck-test",
        "chat holodeck-test",
        "execute_tool broken",
        "execute_tool demo_echo",
        "execute_tool helper",
        "execute_tool lookup",
    ]
    chat = next(s for s in spans if s.name == "chat holodeck-test" and s.parent_id == top.span_id)
    assert chat.attributes["gen_ai.operation.name"] == "chat"
    assert chat.attributes["gen_ai.provider.name"]
    assert chat.attributes["gen_ai.usage.input_tokens"] > 0
    # the sub-agent's turn nests under the parent's tool span, in the same trace
    helper_tool = by_name(spans, "execute_tool helper")
    helper = by_name(spans, "invoke_agent helper")
    assert helper.parent_id == helper_tool.span_id
    assert helper.trace_id == top.trace_id
    assert children(spans, helper) == ["chat holodeck-test"]
    # a failing tool does not stop the turn, but its span says it failed
    broken = by_name(spans, "execute_tool broken")
    assert broken.status_code == 2
    assert "the weather desk is closed" in broken.status_message
    assert broken.attributes["error.type"] == "RuntimeError"
    assert by_name(spans, "execute_tool lookup").status_code != 2
    return spans


def captured(spans: list[Span]) -> str:
    return json.dumps([s.attributes for s in spans])


def test_a_turn_over_otlp_http_is_one_tree_without_content(tmp_path: Path) -> None:
    with otlp_http() as received:
        path = write_agent(tmp_path / "agent", otlp(received.endpoint, "http"))
        agent, _ = asyncio.run(one_turn(path))
        spans = check_turn_tree(received)
        # content is off by default: no prompt, answer, arguments or results
        text = captured(spans)
        assert "Weather in Oslo" not in text and SECRET not in text
        assert not any("gen_ai.tool.call.arguments" in s.attributes for s in spans)
        assert all(h["content-type"] == "application/x-protobuf" for h in received.headers)
        # metrics: GenAI durations and token usage, tool calls and failures
        assert agent.telemetry is not None
        agent.telemetry.flush()
        wanted = {
            "gen_ai.client.operation.duration",
            "gen_ai.client.token.usage",
            "holodeck.tool.calls",
            "holodeck.tool.errors",
        }
        received.wait_for(lambda r: wanted <= r.metrics)
        errors = received.metric_points["holodeck.tool.errors"]
        assert {p["attributes"]["gen_ai.tool.name"] for p in errors} == {"broken"}
        durations = received.metric_points["gen_ai.client.operation.duration"]
        assert {"chat", "invoke_agent"} <= {
            p["attributes"]["gen_ai.operation.name"] for p in durations
        }
        asyncio.run(shutdown_shared())


def test_a_turn_over_otlp_grpc_with_content_captured_and_redacted(tmp_path: Path) -> None:
    with otlp_grpc() as received:
        settings = otlp(
            received.endpoint,
            "grpc",
            capture_content=True,
            redaction_patterns=["sunny in [A-Za-z]+"],
        )
        settings["exporters"]["otlp"]["headers"] = {"x-api-key": "k-123"}
        path = write_agent(tmp_path / "agent", settings)
        asyncio.run(one_turn(path))
        spans = check_turn_tree(received)
        text = captured(spans)
        assert "Weather in Oslo" in text  # the prompt is captured now
        assert "[REDACTED]" in text and SECRET not in text  # the tool's result is not
        assert received.headers[0]["x-api-key"] == "k-123"
        asyncio.run(shutdown_shared())


def test_warnings_of_a_turn_are_exported_with_its_trace_and_span_ids(tmp_path: Path) -> None:
    with otlp_http() as received:
        path = write_agent(tmp_path / "agent", otlp(received.endpoint, "http"))
        agent, _ = asyncio.run(one_turn(path))
        assert agent.telemetry is not None
        agent.telemetry.flush()
        received.wait_for(lambda r: any("tool broken failed" in log.body for log in r.logs))
        received.wait_for(lambda r: any(s.name == "execute_tool broken" for s in r.spans))
        log = next(log for log in received.logs if "tool broken failed" in log.body)
        broken = by_name(received.spans, "execute_tool broken")
        assert (log.trace_id, log.span_id) == (broken.trace_id, broken.span_id)
        assert log.severity in ("WARN", "WARNING")
        asyncio.run(shutdown_shared())


def test_exported_log_records_are_redacted(tmp_path: Path) -> None:
    with otlp_http() as received:
        settings = otlp(received.endpoint, "http", redaction_patterns=["broken"])
        path = write_agent(tmp_path / "agent", settings)
        agent, _ = asyncio.run(one_turn(path))
        assert agent.telemetry is not None
        agent.telemetry.flush()
        received.wait_for(lambda r: any("tool [REDACTED] failed" in log.body for log in r.logs))
        assert not any("broken" in log.body for log in received.logs)
        asyncio.run(shutdown_shared())


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.parametrize("protocol", ["http", "grpc"])
def test_a_dead_collector_neither_slows_nor_fails_a_turn(tmp_path: Path, protocol: str) -> None:
    from holodeck.observability._telemetry import FLUSH_LIMIT_MS

    _, untraced, untraced_close = asyncio.run(timed_turn(write_agent(tmp_path / "off", None)))
    dead = otlp(f"http://127.0.0.1:{closed_port()}", protocol)
    dead["traces"]["schedule_delay_millis"] = 1  # export (and fail) while the turn runs
    dead["exporters"]["otlp"]["timeout_ms"] = 20_000  # waiting on it could not hide
    _, traced, closing = asyncio.run(timed_turn(write_agent(tmp_path / "dead", dead)))
    assert traced < untraced + 1.5, (traced, untraced)
    # closing waits for the export at most the flush limit, not the export's timeout
    assert closing < untraced_close + FLUSH_LIMIT_MS / 1000 + 1.5, (closing, untraced_close)


def test_holodeck_test_traces_cases_and_metrics_with_judges_nested(tmp_path: Path) -> None:
    from holodeck.testing.runner import TestOptions, run_tests

    with otlp_http() as received:
        extra = {
            "evaluations": {"metrics": [{"metric": "relevance", "threshold": 1}]},
            # `broken` fails, as the case expects (`allow_error`)
            "test_cases": [
                {
                    "name": "oslo",
                    "input": "Weather?",
                    "expected_tools": [
                        {"name": name, "allow_error": name == "broken"} for name in CALLS
                    ],
                }
            ],
        }
        settings = otlp(received.endpoint, "http")
        settings["traces"]["capture_evaluation_content"] = True
        path = write_agent(tmp_path / "agent", settings, **extra)
        spec = load_agent(path)
        run = asyncio.run(run_tests(spec, TestOptions(run=RunOptions(model="test"))))
        assert run.summary.passed == 1
        received.wait_for(lambda r: any(s.name == "test_case oslo" for s in r.spans))
        spans = received.spans
        case = by_name(spans, "test_case oslo")
        assert case.attributes["holodeck.test.status"] == "pass"
        assert "invoke_agent top" in children(spans, case)
        metric = by_name(spans, "evaluate relevance")
        assert metric.parent_id == case.span_id
        assert metric.attributes["holodeck.metric.score"] == 5.0
        assert metric.attributes["holodeck.metric.input"] == "Weather?"
        judge = by_name(spans, "invoke_agent judge")
        assert judge.parent_id == metric.span_id
        asyncio.run(shutdown_shared())  # flushes the metrics
        received.wait_for(lambda r: "holodeck.test.cases" in r.metrics)
        points = received.metric_points["holodeck.test.cases"]
        assert points[-1]["attributes"] == {"holodeck.test.status": "pass"}


def python(cwd: Path, *args: str, input: str | None = None) -> subprocess.CompletedProcess[str]:
    """`python ARGS` in a fresh interpreter that sees this one's packages, in `cwd`."""
    return subprocess.run(
        [sys.executable, *args],
        input=input,
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
        timeout=120,
    )


def test_no_observability_imports_no_sdk(tmp_path: Path) -> None:
    path = write_agent(
        tmp_path / "agent",
        None,
        test_cases=[{"name": "oslo", "input": "Weather?", "expected_tools": ["lookup"]}],
    )
    code = (
        "import sys\n"
        "from holodeck.cli.main import main\n"
        "try:\n"
        f"    main(['test', {str(path)!r}, '--model', 'test'])\n"
        "except SystemExit as exc:\n"
        "    assert exc.code == 0, exc.code\n"
        "print(sorted(m for m in sys.modules if m.startswith('opentelemetry.sdk')))\n"
    )
    done = python(tmp_path, "-c", code)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[]"


def test_chat_trace_prints_the_turn_tree_without_a_collector(tmp_path: Path) -> None:
    path = write_agent(tmp_path / "agent", None)
    done = python(
        tmp_path,
        "-m",
        "holodeck",
        "chat",
        str(path),
        "--model",
        "test",
        "--trace",
        input="Weather? /call *",
    )
    assert done.returncode == 0, done.stderr
    assert "invoke_agent top" in done.stderr
    assert "│  └─ invoke_agent helper" in done.stderr
    assert "execute_tool broken" in done.stderr and "FAILED: RuntimeError" in done.stderr


def test_the_agent_block_lays_over_the_global_one_field_by_field(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.yaml").write_text(
        dump(
            {
                "observability": {
                    "enabled": True,
                    "traces": {"sample_rate": 0.5, "capture_content": True},
                    "exporters": {"otlp": {"endpoint": "http://collector:4317"}},
                }
            }
        )
    )
    spec = load_agent(write_agent(tmp_path / "a", {"traces": {"capture_content": False}}))
    settings = spec.observability
    assert settings is not None and settings.enabled
    assert settings.traces.sample_rate == 0.5 and not settings.traces.capture_content
    assert settings.exporters.otlp is not None
    assert settings.exporters.otlp.endpoint == "http://collector:4317"
    off = load_agent(write_agent(tmp_path / "b", {"enabled": False}))
    assert telemetry_for(off) is None


def test_otel_sdk_disabled_turns_it_off(tmp_path: Path) -> None:
    spec = load_agent(write_agent(tmp_path / "a", {"enabled": True}))
    assert telemetry_for(spec, {"OTEL_SDK_DISABLED": "true"}) is None


@pytest.mark.parametrize(
    ("block", "expected"),
    [
        ({"metrics": {"include_semantic_kernel_metrics": True}}, "Semantic Kernel"),
        ({"exporters": {"azure_monitor": {"enabled": True}}}, "Azure Monitor"),
        (
            {"exporters": {"otlp": {"protocol": "http", "insecure": True}}},
            "`insecure` applies to grpc",
        ),
        ({"traces": {"redaction_patterns": ["(unclosed"]}}, "not a valid regex"),
        ({"traces": {"sample_rate": 2}}, "sample_rate"),
        ({"tracing": {}}, "tracing"),
    ],
)
def test_what_is_not_acted_on_is_refused_clearly(
    tmp_path: Path, block: dict[str, Any], expected: str
) -> None:
    with pytest.raises(HoloDeckError) as caught:
        load_agent(write_agent(tmp_path / "a", {"enabled": True, **block}))
    assert expected in str(caught.value)
    assert "agent.yaml:" in str(caught.value)


def test_the_guides_configuration_example_is_valid(tmp_path: Path) -> None:
    from ruamel.yaml import YAML

    from holodeck.spec.models.observability_settings import ObservabilitySettings

    page = (Path(__file__).resolve().parents[2] / "docs" / "observability.md").read_text()
    (block,) = [b for b in page.split("```yaml\n")[1:] if b.startswith("observability:")]
    data = YAML(typ="safe").load(block.split("```")[0])
    settings = ObservabilitySettings.model_validate(data["observability"])
    assert settings.enabled and settings.exporters.otlp is not None
    # and as agent.yaml's block it loads, ${VAR} and all
    os.environ["COLLECTOR_KEY"] = "k"
    try:
        spec = load_agent(write_agent(tmp_path / "a", data["observability"]))
    finally:
        del os.environ["COLLECTOR_KEY"]
    assert spec.observability is not None
    assert spec.observability.exporters.otlp is not None
    assert spec.observability.exporters.otlp.headers == {"x-api-key": "k"}


def test_a_served_turn_is_a_server_span_and_its_log_line_carries_the_ids(
    tmp_path: Path,
) -> None:
    from server_harness import log_lines, served

    with otlp_http() as received:
        path = write_agent(tmp_path / "agent", otlp(received.endpoint, "http"))
        with served(path, state_dir=tmp_path / "state") as server:
            answer = server.chat("Weather?")
            assert answer.status_code == 200
        (line,) = [x for x in log_lines(tmp_path / "home", "top") if x["endpoint"] == "/v1/chat"]
        received.wait_for(lambda r: any(s.span_id == line["span_id"] for s in r.spans))
        request = next(s for s in received.spans if s.span_id == line["span_id"])
        assert request.name == "/v1/chat" and request.trace_id == line["trace_id"]
        assert request.attributes["holodeck.request.id"] == answer.json()["request_id"]
        turn = by_name(received.spans, "invoke_agent top")
        assert turn.parent_id == request.span_id
        asyncio.run(shutdown_shared())


def test_without_observability_the_log_line_has_no_trace_ids(tmp_path: Path) -> None:
    from server_harness import log_lines, served

    path = write_agent(tmp_path / "agent", None)
    with served(path, state_dir=tmp_path / "state") as server:
        assert server.chat("Weather?").status_code == 200
    (line,) = [x for x in log_lines(tmp_path / "home", "top") if x["endpoint"] == "/v1/chat"]
    assert "trace_id" not in line and "span_id" not in line


def test_prometheus_serves_the_metrics_on_its_path_only(tmp_path: Path) -> None:
    import httpx

    from server_harness import free_port

    port = free_port()
    settings = {
        "enabled": True,
        "exporters": {"prometheus": {"enabled": True, "port": port, "path": "/scrape"}},
    }
    asyncio.run(one_turn(write_agent(tmp_path / "agent", settings)))
    with httpx.Client(base_url=f"http://127.0.0.1:{port}") as client:
        scraped = client.get("/scrape")
        assert scraped.status_code == 200
        assert "holodeck_tool_calls" in scraped.text
        assert 'gen_ai_tool_name="broken"' in scraped.text
        assert client.get("/metrics").status_code == 404
    asyncio.run(shutdown_shared())  # stops the server
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"http://127.0.0.1:{port}/scrape")


def in_memory(settings: dict[str, Any], env: dict[str, str] | None = None) -> Any:
    """A Telemetry whose spans are also collected in memory (the SDK's own exporter)."""
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from holodeck.observability import Telemetry
    from holodeck.spec.models.observability_settings import ObservabilitySettings

    telemetry = Telemetry(ObservabilitySettings.model_validate(settings), "svc", env=env or {})
    memory = InMemorySpanExporter()
    telemetry.tracer_provider.add_span_processor(SimpleSpanProcessor(memory))
    return telemetry, memory


def test_console_export_is_json_on_stderr_shaped_by_its_fields(
    capsys: pytest.CaptureFixture[str],
) -> None:
    for pretty, stamps in ((True, True), (False, False)):
        console = {"enabled": True, "pretty_print": pretty, "include_timestamps": stamps}
        telemetry, _ = in_memory({"enabled": True, "exporters": {"console": console}})
        with telemetry.span("test_case one"):
            pass
        telemetry.shutdown()
        out, err = capsys.readouterr()
        assert out == ""  # standard output is the chat's or the report's
        spans = [line for line in err.splitlines() if '"test_case one"' in line]
        assert spans, err
        assert ("start_time" in err) == stamps
        assert spans[0].startswith("    ") == pretty  # indented, else one line a span
        if not pretty:
            assert json.loads(spans[0])["name"] == "test_case one"


def test_a_sampled_out_turn_is_not_exported_but_still_counted(tmp_path: Path) -> None:
    with otlp_http() as received:
        settings = otlp(received.endpoint, "http", sample_rate=0.0)
        asyncio.run(one_turn(write_agent(tmp_path / "agent", settings)))
        asyncio.run(shutdown_shared())
        received.wait_for(lambda r: "holodeck.tool.calls" in r.metrics)
        assert received.spans == []
        calls = received.metric_points["holodeck.tool.calls"]
        assert {p["attributes"]["gen_ai.tool.name"] for p in calls} >= {"lookup", "broken"}


def test_otel_variables_fill_in_what_the_block_leaves_out(tmp_path: Path) -> None:
    with otlp_http() as received:
        env = {
            "OTEL_EXPORTER_OTLP_ENDPOINT": received.endpoint,
            "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
            "OTEL_SERVICE_NAME": "from-the-environment",
        }
        with pytest.MonkeyPatch.context() as patch:
            for name, value in env.items():
                patch.setenv(name, value)
            path = write_agent(tmp_path / "agent", {"enabled": True})  # no exporter named
            asyncio.run(one_turn(path))
            asyncio.run(shutdown_shared())
        received.wait_for(lambda r: any(s.name == "invoke_agent top" for s in r.spans))
        top = by_name(received.spans, "invoke_agent top")
        assert top.resource["service.name"] == "from-the-environment"


def test_prompt_tools_model_calls_are_traced_under_their_tool_span(tmp_path: Path) -> None:
    telemetry, memory = in_memory({"enabled": True, "exporters": {"console": {"enabled": False}}})
    root = tmp_path / "agent"
    root.mkdir()
    (root / "agent.yaml").write_text(
        dump(
            {
                "name": "writer",
                "model": {"provider": "test"},
                "instructions": {"inline": "Write."},
                "tools": [
                    {
                        "type": "prompt",
                        "name": "haiku",
                        "description": "A haiku about a topic.",
                        "template": "Write a haiku about {{ topic }}.",
                        "parameters": {"topic": {"type": "string"}},
                    }
                ],
            }
        )
    )
    agent = Agent(load_agent(root / "agent.yaml"), RunOptions(model="test"), telemetry=telemetry)
    with agent.options.offline.expecting(["haiku"]):
        asyncio.run(agent.answer("A haiku please"))
    spans = memory.get_finished_spans()
    tool = next(s for s in spans if s.name == "execute_tool haiku")
    inner = [s for s in spans if s.parent is not None and s.parent.span_id == tool.context.span_id]
    assert [s.name for s in inner] == ["invoke_agent agent"]
    telemetry.shutdown()


def test_holodeck_test_verbose_prints_each_cases_tree_when_observability_is_on(
    tmp_path: Path,
) -> None:
    settings = {"enabled": True, "exporters": {"console": {"enabled": False}}}
    path = write_agent(
        tmp_path / "agent",
        settings,
        test_cases=[{"name": "oslo", "input": "Weather?", "expected_tools": ["lookup"]}],
    )
    done = python(tmp_path, "-m", "holodeck", "test", str(path), "--model", "test", "-v")
    assert done.returncode == 0, done.stderr
    assert "test_case oslo" in done.stdout
    assert "└─ invoke_agent top" in done.stdout or "├─ invoke_agent top" in done.stdout


@pytest.mark.parametrize("off", ["traces", "metrics"])
def test_traces_or_metrics_can_be_turned_off_alone(tmp_path: Path, off: str) -> None:
    with otlp_http() as received:
        settings = otlp(received.endpoint, "http")
        settings[off]["enabled"] = False
        asyncio.run(one_turn(write_agent(tmp_path / "agent", settings)))
        asyncio.run(shutdown_shared())
        on_arrived = (lambda r: bool(r.metrics)) if off == "traces" else (lambda r: bool(r.spans))
        received.wait_for(on_arrived)
        assert (received.spans == []) == (off == "traces")
        assert (received.metrics == set()) == (off == "metrics")


def test_a_taken_prometheus_port_is_a_clear_error(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        settings = {"enabled": True, "exporters": {"prometheus": {"enabled": True, "port": port}}}
        spec = load_agent(write_agent(tmp_path / "agent", settings))
        with pytest.raises(HoloDeckError) as caught:
            Agent(spec, RunOptions(model="test")).prepare()
    assert f"cannot listen on 127.0.0.1:{port}" in str(caught.value)


def test_holodeck_test_against_a_dead_collector_ends_within_the_flush_limit(
    tmp_path: Path,
) -> None:
    dead = otlp(f"http://127.0.0.1:{closed_port()}", "grpc")
    dead["exporters"]["otlp"]["timeout_ms"] = 600_000  # an exporter that would wait 10 minutes
    path = write_agent(
        tmp_path / "agent",
        dead,
        test_cases=[{"name": "oslo", "input": "Weather?", "expected_tools": ["lookup"]}],
    )
    clock = time.perf_counter()
    done = python(tmp_path, "-m", "holodeck", "test", str(path), "--model", "test")
    assert done.returncode == 0, done.stderr
    assert time.perf_counter() - clock < 120  # start, MCP server, the 5 s flush limit, exit


def test_a_run_closing_leaves_the_shared_telemetry_to_another_run_still_using_it(
    tmp_path: Path,
) -> None:
    def turns(received: Received) -> int:
        return sum(s.name.startswith("invoke_agent") for s in received.spans)

    with otlp_http() as received:
        path = write_agent(tmp_path / "agent", otlp(received.endpoint, "http"))
        first = Agent(load_agent(path), RunOptions(model="test"))
        second = Agent(load_agent(path), RunOptions(model="test"))
        assert first.telemetry is second.telemetry  # one process, one set of exporters

        async def both() -> None:
            async with Run(second):
                async with Run(first):
                    await first.answer("Weather in Oslo?")
                # the first run has closed: the second's turn is still exported
                await second.answer("Weather in Oslo?")
                assert second.telemetry is not None
                await second.telemetry.aflush()
                received.wait_for(lambda r: turns(r) >= 2, timeout=10)

        asyncio.run(both())
