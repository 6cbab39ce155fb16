"""Human approval in `holodeck chat`: a terminal asks `Allow TOOL(args)? [y/N]` and the
turn goes on with the answer; piped chat cannot ask, so it denies (unless
--approve-all). The offline `test` model calls the tool the question names (`/call`)."""

from __future__ import annotations

from pathlib import Path

from conftest import Write
from test_chat import Terminal, piped

AGENT = """
name: shop
model: {provider: openai, name: gpt-4o-mini}
instructions: {inline: You manage orders.}
tools:
  - {type: function, name: delete_order, file: tools.py, function: delete_order, approval: required}
  - {type: function, name: lookup, file: tools.py, function: lookup}
"""
TOOLS = '''
from pathlib import Path

def delete_order(order_id: str) -> str:
    """Delete an order.

    Args:
        order_id: The order.
    """
    with Path(__file__).with_name("deleted").open("a") as log:
        log.write(order_id + "\\n")
    return f"order {order_id} deleted"

def lookup(order_id: str) -> str:
    """Look an order up.

    Args:
        order_id: The order.
    """
    return f"order {order_id} shipped"
'''


def shop(write: Write) -> Path:
    return write({"agent.yaml": AGENT, "tools.py": TOOLS})


def deleted(root: Path) -> list[str]:
    path = root / "deleted"
    return path.read_text().split() if path.exists() else []


def test_a_terminal_asks_y_n_with_the_arguments_and_goes_on_with_the_answer(
    write: Write,
) -> None:
    root = shop(write)
    term = Terminal(str(root), "--model", "test")
    term.expect("› ")
    term.ask("delete order 42 /call delete_order")
    term.expect('? delete_order(order_id="42") waits for approval')
    term.expect('Allow delete_order(order_id="42")? [y/N]')
    term.ask("y")
    term.expect("delete_order approved")
    term.expect("✓ delete_order")
    term.expect("order 42 deleted")
    term.prompt()
    term.ask("delete order 7 /call delete_order")
    term.expect('Allow delete_order(order_id="7")? [y/N]')
    term.ask("")  # Enter: the default, no
    term.expect("delete_order denied")
    term.expect("✗ delete_order")
    term.expect("denied: The user denied this tool call.")
    term.expect("delete_order was not run: The user denied this tool call.")
    term.prompt()
    term.ask("lookup order 5 /call lookup")  # a tool without approval is not asked about
    term.expect("order 5 shipped")
    term.prompt()
    term.ask("exit")
    assert term.exit_code() == 0
    assert "Allow lookup" not in term.screen
    assert deleted(root) == ["42"]


def test_piped_chat_denies_with_a_clear_line_unless_approve_all(write: Write) -> None:
    root = shop(write)

    denied = piped(str(root), "--model", "test", question="delete order 42 /call delete_order")
    allowed = piped(
        str(root),
        "--model",
        "test",
        "--approve-all",
        question="delete order 43 /call delete_order",
    )

    assert denied.returncode == 0, denied.stderr
    assert "delete_order denied: nobody was asked (stdin is not a terminal)" in denied.stderr
    assert "--approve-all" in denied.stderr
    assert "delete_order was not run: Nobody was asked to approve" in denied.stdout
    assert allowed.returncode == 0, allowed.stderr
    assert "delete_order approved (--approve-all)" in allowed.stderr
    assert "order 43 deleted" in allowed.stdout
    assert deleted(root) == ["43"]


def test_a_paused_turn_is_recorded_and_replayed(write: Write, tmp_path: Path) -> None:
    root = shop(write)
    cassette = tmp_path / "approval.yaml"
    question = "delete order 42 /call delete_order"

    recorded = piped(
        str(root), "--model", "test", "--approve-all", "--record", str(cassette), question=question
    )
    (root / "deleted").unlink()
    # no --model and no API key: both requests of the paused turn come from the cassette
    replayed = piped(str(root), "--approve-all", "--replay", str(cassette), question=question)
    denied = piped(str(root), "--replay", str(cassette), question=question)

    assert recorded.returncode == 0, recorded.stderr
    assert replayed.returncode == 0, replayed.stderr
    assert replayed.stdout == recorded.stdout and "order 42 deleted" in replayed.stdout
    assert deleted(root) == ["42"]  # the approved call ran again: tools are not recorded
    # a denial sends the model another request than the one recorded
    assert denied.returncode == 3 and "no response recorded" in denied.stderr
