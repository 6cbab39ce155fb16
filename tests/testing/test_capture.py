"""`holodeck test capture`: conversations from chat session files, saved runs and request
logs made test cases that load and run; personal data redacted; bad inputs said plainly."""

from __future__ import annotations

import os
import random
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest
import yaml

from cli_invoke import invoke
from conftest import Write
from holodeck.server._request_log import RequestLog, RequestRecord
from holodeck.spec.models.settings import LoggingSettings

AGENT = """
# the order desk, offline
name: desk
model: {provider: test}
instructions: {inline: You answer questions about orders.}
tools:
  - {type: function, name: order_status, file: tools.py, function: order_status}
test_cases:
  - name: first   # kept as written
    input: "Where is order 7?"
"""
TOOLS = '''
def order_status(order_id: str) -> str:
    """The status of an order.

    Args:
        order_id: The order's number.
    """
    return f"order {order_id}: shipped"
'''


def holodeck(
    *args: str, cwd: Path, stdin: str = "", home: Path | None = None
) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **({"HOLODECK_HOME": str(home)} if home else {})}
    return subprocess.run(
        [sys.executable, "-m", "holodeck", *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=180,
        env=env,
    )


@pytest.fixture
def desk(write: Write) -> Path:
    return write({"agent.yaml": AGENT, "tools.py": TOOLS})


@pytest.fixture(scope="module")
def saved_chat(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A session `holodeck chat --session` saved: one question that called the tool."""
    root = tmp_path_factory.mktemp("chat")
    (root / "agent.yaml").write_text(AGENT, encoding="utf-8")
    (root / "tools.py").write_text(TOOLS, encoding="utf-8")
    session = root / "chat.json"
    question = "Where is order 1042? Mail ann@example.com /call order_status"
    done = holodeck(
        "chat", str(root), "--session", str(session), cwd=root, stdin=question, home=root
    )
    assert done.returncode == 0, done.stderr
    return session


@pytest.fixture
def chat_file(saved_chat: Path, tmp_path: Path) -> Path:
    """The saved chat, a copy of its own for each test."""
    copy = tmp_path / "chat.json"
    copy.write_bytes(saved_chat.read_bytes())
    return copy


def test_a_chat_session_becomes_a_case_that_runs_and_passes(
    desk: Path, chat_file: Path, tmp_path: Path
) -> None:
    before = (desk / "agent.yaml").read_text(encoding="utf-8")
    done = invoke(
        "test",
        "capture",
        "--from-chat",
        str(chat_file),
        "--name",
        "order-1042",
        "-o",
        str(desk / "agent.yaml"),
    )
    assert done.exit_code == 0, done.output
    assert "Added 1 case to" in done.output
    after = (desk / "agent.yaml").read_text(encoding="utf-8")
    assert after.startswith(before)  # its comments, quotes and layout are kept
    case = yaml.safe_load(after)["test_cases"][-1]
    assert case["name"] == "order-1042"
    assert case["input"].startswith("Where is order 1042?")
    assert case["expected_tools"] == [{"name": "order_status", "args": {"order_id": "1042"}}]
    assert "1042" in case["ground_truth"]
    ran = holodeck("test", str(desk), "--case", "order-1042", cwd=tmp_path)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "PASS  order-1042" in ran.stdout


def test_redaction_takes_the_email_out_of_the_case(chat_file: Path) -> None:
    plain = invoke("test", "capture", "--from-chat", str(chat_file))
    assert plain.exit_code == 0, plain.output
    assert "ann@example.com" in plain.output
    redacted = invoke("test", "capture", "--from-chat", str(chat_file), "--redact", "pii")
    assert redacted.exit_code == 0, redacted.output
    assert "ann@example.com" not in redacted.output
    assert "Mail [email]" in redacted.output
    patterned = invoke(
        "test", "capture", "--from-chat", str(chat_file), "--redact-pattern", r"order 10\d\d"
    )
    assert "order 1042" not in patterned.output.split("expected_tools")[0]
    assert "[redacted]" in patterned.output


def test_a_saved_runs_case_is_captured(desk: Path, tmp_path: Path) -> None:
    ran = holodeck("test", str(desk), cwd=tmp_path)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    done = invoke("test", "capture", "--from-run", "latest", "--case", "first", cwd=tmp_path)
    assert done.exit_code == 0, done.output
    case = yaml.safe_load(done.output)[0]
    assert case["name"] == "where-is-order-7"
    assert case["input"] == "Where is order 7?"
    missing = invoke("test", "capture", "--from-run", "latest", "--case", "nope", cwd=tmp_path)
    assert missing.exit_code == 2
    assert "has no case 'nope'" in missing.output
    assert "its cases: first" in missing.output


def write_log(path: Path, turns: int, *, redact: bool = False) -> None:
    """A request log as the server writes it: `turns` answered turns and one refusal."""
    log = RequestLog(path, LoggingSettings(log_level="DEBUG", redact_content=redact))
    try:
        for number in range(turns):
            log.write(
                RequestRecord(
                    request_id=f"req-{number}",
                    endpoint="/v1/chat",
                    status=200,
                    started=time.perf_counter(),
                    session_id=f"s{number}",
                    message=f"Where is order {number}?",
                    tool_calls=[{"name": "order_status", "args": {"order_id": str(number)}}],
                    response=f"Order {number} has shipped.",
                )
            )
        log.write(RequestRecord("req-x", "/v1/chat", 401, time.perf_counter(), message="let me in"))
    finally:
        log.close()


def test_the_request_log_is_sampled_into_cases_the_same_way_for_a_seed(tmp_path: Path) -> None:
    log = tmp_path / "agent-desk.log"
    write_log(log, 30)
    args = ("test", "capture", "--from-log", str(log), "--sample", "5", "--seed", "7")
    first, again = invoke(*args), invoke(*args)
    assert first.exit_code == 0, first.output
    assert first.output.split("\n", 1)[1] == again.output.split("\n", 1)[1]  # but the date
    cases = yaml.safe_load(first.output)
    assert len(cases) == 5
    chosen = sorted(random.Random(7).sample(range(30), 5))  # oldest first
    assert [c["input"] for c in cases] == [f"Where is order {n}?" for n in chosen]
    assert cases[0]["expected_tools"] == [
        {"name": "order_status", "args": {"order_id": str(chosen[0])}}
    ]
    other = invoke("test", "capture", "--from-log", str(log), "--sample", "5", "--seed", "8")
    assert yaml.safe_load(other.output) != cases
    every = invoke("test", "capture", "--from-log", str(log), "--sample", "99")
    assert len(yaml.safe_load(every.output)) == 30  # the refused request is not a turn
    one = invoke("test", "capture", "--from-log", str(log), "--sample", "1", "--name", "asked")
    assert [c["name"] for c in yaml.safe_load(one.output)] == ["asked-1"]
    tomorrow = datetime.now(UTC).date().replace(year=datetime.now(UTC).year + 1).isoformat()
    late = invoke("test", "capture", "--from-log", str(log), "--since", tomorrow)
    assert late.exit_code == 2
    assert "no answered turn since" in late.output


def test_a_log_without_content_says_how_to_log_it_and_which_sessions_to_capture(
    tmp_path: Path,
) -> None:
    log = tmp_path / "agent-desk.log"
    write_log(log, 3, redact=True)
    done = invoke("test", "capture", "--from-log", str(log))
    assert done.exit_code == 2
    assert "logging.redact_content" in done.output
    assert "redact_content: false" in done.output
    assert "--from-session ID" in done.output
    assert "s2" in done.output
    assert "Traceback" not in done.output


@pytest.mark.parametrize(
    ("args", "said"),
    [
        ((), "give one conversation to capture"),
        (("--from-chat", "a.json", "--from-run", "latest"), "not --from-chat and --from-run"),
        (("--from-chat", "missing.json"), "no chat session file at missing.json"),
        (("--from-chat", "chat.json", "--redact-pattern", "(("), "not a regular expression"),
        (("--from-chat", "chat.json", "-o", "cases.csv"), "cannot add a case to a .csv file"),
        (("--from-log", "nowhere.log"), "no request log at nowhere.log"),
        (("--from-log", "agent.log", "--since", "last week"), "--since 'last week': not a date"),
        (("--from-run", "nope"), "no saved run"),
    ],
)
def test_bad_inputs_are_said_plainly(
    chat_file: Path, tmp_path: Path, args: tuple[str, ...], said: str
) -> None:
    (tmp_path / "agent.log").write_text("", encoding="utf-8")
    done = invoke("test", "capture", *args, cwd=tmp_path)
    assert done.exit_code == 2, done.output
    assert said in done.output
    assert "Traceback" not in done.output


def test_damaged_session_files_are_refused_without_a_traceback(tmp_path: Path) -> None:
    chosen = random.Random(42)
    samples = [
        b"",
        b"{",
        b"[1, 2, 3]",
        b'{"format": "holodeck-session", "version": 9, "messages": []}',
        b'{"format": "holodeck-session", "version": 1, "messages": [{"kind": "nonsense"}]}',
        b"[" * 100_000,
        *(bytes(chosen.randrange(256) for _ in range(200)) for _ in range(5)),
    ]
    for number, data in enumerate(samples):
        session = tmp_path / f"damaged-{number}.json"
        session.write_bytes(data)
        done = invoke("test", "capture", "--from-chat", str(session))
        assert done.exit_code == 2, (data[:40], done.output)
        assert f"{session} is not a chat session file" in done.output
        assert "Traceback" not in done.output


def test_a_name_the_cases_file_holds_already_is_refused(chat_file: Path, tmp_path: Path) -> None:
    cases = tmp_path / "cases.yaml"
    assert (
        invoke(
            "test", "capture", "--from-chat", str(chat_file), "--name", "a", "-o", str(cases)
        ).exit_code
        == 0
    )
    again = invoke(
        "test", "capture", "--from-chat", str(chat_file), "--name", "a", "-o", str(cases)
    )
    assert again.exit_code == 2
    assert "already holds a case named 'a'" in again.output
    jsonl = tmp_path / "cases.jsonl"
    for name in ("a", "b"):
        done = invoke(
            "test", "capture", "--from-chat", str(chat_file), "--name", name, "-o", str(jsonl)
        )
        assert done.exit_code == 0, done.output
    assert len(jsonl.read_text(encoding="utf-8").splitlines()) == 2
