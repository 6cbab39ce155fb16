"""Chat's `/save-case NAME [FILE]`: the conversation so far kept as a test case in the
agent's own cases, which `holodeck test` then runs and passes."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

from conftest import Write
from holodeck.cli.chat.save_case import save_case
from holodeck.cli.chat.transcript import Exchange
from holodeck.config.loader import load_agent
from holodeck.runtime import ToolCallFinished
from test_chat import Terminal

REPO = Path(__file__).resolve().parents[2]
AGENT = """
# the order desk, offline
name: desk
model: {provider: test}
instructions: {inline: You answer questions about orders.}
tools:
  - {type: function, name: order_status, file: tools.py, function: order_status}
test_cases:
  - {name: first, input: "Where is order 7?"}
"""
TOOLS = '''
def order_status(order_id: str) -> str:
    """The status of an order.

    Args:
        order_id: The order's number.
    """
    return f"order {order_id}: shipped"
'''


def holodeck_test(path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "holodeck", "test", str(path), *args],
        cwd=path,
        capture_output=True,
        text=True,
        timeout=180,
        env=dict(os.environ),
    )


def test_save_case_keeps_the_chat_in_agent_yaml_and_it_replays(write: Write) -> None:
    desk = write({"agent.yaml": AGENT, "tools.py": TOOLS})
    before = (desk / "agent.yaml").read_text(encoding="utf-8")
    term = Terminal(str(desk), cwd=desk)
    term.expect("› ")
    term.command("/save-case", "error: /save-case needs a name")
    term.command('/call order_status {"order_id": "1042"}', "The next answer calls order_status")
    term.ask("Where is order 1042?")
    term.prompt()
    term.command("/save-case order-chat", "Saved the conversation as test case 'order-chat' in")
    term.command("/save-case order-chat", "already holds a case named 'order-chat'")
    term.ask("/exit")
    assert term.exit_code() == 0

    after = (desk / "agent.yaml").read_text(encoding="utf-8")
    assert after.startswith(before)
    case = yaml.safe_load(after)["test_cases"][-1]
    assert case["name"] == "order-chat"
    assert case["input"] == "Where is order 1042?"
    assert case["expected_tools"] == [{"name": "order_status", "args": {"order_id": "1042"}}]
    ran = holodeck_test(desk, "--case", "order-chat")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "PASS  order-chat" in ran.stdout


def test_an_images_case_goes_to_its_tests_folder(tmp_path: Path) -> None:
    image = tmp_path / "support"
    shutil.copytree(REPO / "examples" / "support-image", image)
    spec = load_agent(image)
    call = ToolCallFinished("c1", "orders_status", {"order_id": "A-1001"}, {"ok": 1}, None, 3)
    asked = Exchange("Has A-1001 arrived?", [call], "Yes, it was delivered.")
    cancelled = Exchange("Never mind", status="cancelled")  # not in the conversation
    written = save_case(spec, [asked, cancelled], "arrived", None)
    assert written == image / "tests" / "captured.yaml"
    saved = yaml.safe_load(written.read_text(encoding="utf-8"))
    assert saved["test_cases"] == [
        {
            "name": "arrived",
            "input": "Has A-1001 arrived?",
            "ground_truth": "Yes, it was delivered.",
            "expected_tools": [{"name": "orders_status", "args": {"order_id": "A-1001"}}],
        }
    ]
    ran = holodeck_test(image, "--model", "test", "--case", "arrived")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "PASS  arrived" in ran.stdout
