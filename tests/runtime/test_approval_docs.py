"""docs/controls.md's human approval example, run as written: its cases approve and
deny with the offline model and pass, and it loads without a warning."""

from __future__ import annotations

import json
import re
from pathlib import Path

from test_test_command import run

REPO = Path(__file__).resolve().parents[2]
TOOLS = '''
def lookup(order_id: str) -> str:
    """Look an order up."""
    return f"order {order_id} shipped"

def delete_order(order_id: str) -> str:
    """Delete an order."""
    return f"order {order_id} deleted"

def refund_order(order_id: str) -> str:
    """Refund an order."""
    return f"order {order_id} refunded"
'''


def approval_example() -> str:
    page = (REPO / "docs" / "controls.md").read_text(encoding="utf-8")
    section = page.split("## Human approval", 1)[1]
    found = re.search(r"^```yaml\n(.*?)^```$", section, flags=re.M | re.S)
    assert found is not None
    return found.group(1)


def test_the_approval_example_runs_as_the_page_says(tmp_path: Path) -> None:
    root = tmp_path / "orders"
    root.mkdir()
    (root / "agent.yaml").write_text(approval_example(), encoding="utf-8")
    (root / "tools.py").write_text(TOOLS, encoding="utf-8")

    checked = run("validate", str(root), cwd=tmp_path)
    tested = run("test", str(root), "-o", "run.json", cwd=tmp_path)

    assert checked.exit_code == 0, checked.output
    assert "warning" not in checked.output.lower()
    assert tested.exit_code == 0, tested.output
    cases = json.loads((tmp_path / "run.json").read_text())["cases"]
    by_name = {case["name"]: case["runs"][0]["turns"][0] for case in cases}
    allowed = by_name["deletes when allowed"]["tool_calls"][0]
    assert allowed["result"] == "order 42 deleted"
    refused = by_name["says so when refused"]
    assert refused["tool_calls"][0]["error"].startswith("denied: ")
    assert refused["output"].startswith("delete_order was not run")
