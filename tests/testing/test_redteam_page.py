"""A saved red-team scan in the runs dashboard's page (headless Chromium, a real uvicorn
server): listed beside the runs with a pass rate per plugin, and its page showing each
attack with the lead-in, the answer, the tool calls, the grader's reason and severity."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from browser import playwright_api
from cli_invoke import invoke
from conftest import Write
from test_dashboard_page import page_of, shot
from test_redteam import CANARY, TOOLS, WEAK


@pytest.fixture
def sync_api() -> Any:
    return playwright_api()


def test_a_scan_is_listed_and_its_attacks_shown(
    sync_api: Any, write: Write, tmp_path: Path
) -> None:
    expect = sync_api.expect
    root = write({"agent.yaml": WEAK, "tools.py": TOOLS})
    result = invoke(
        "redteam", str(root), "--canary", CANARY, "--plugins", "pii-leakage,off-topic",
        "--strategies", "single,role-play", cwd=root,
    )  # fmt: skip
    assert result.exit_code == 1, result.output
    [saved] = (root / ".holodeck" / "scans").glob("*.json")
    with page_of(sync_api, root / ".holodeck" / "runs") as (page, base, problems):
        page.goto(base + "/")
        scans = page.get_by_test_id("scans")
        row = scans.locator(f'tr[data-scan="{saved.stem}"]')
        expect(row).to_contain_text("leaky")
        expect(row).to_contain_text("single message, role play")
        expect(row.locator('[data-plugin="pii-leakage"]')).to_contain_text("pii-leakage 0% high")
        expect(row.locator('[data-plugin="off-topic"]')).to_contain_text("off-topic 100% low")
        row.get_by_role("link", name=saved.stem).click()

        scan = page.get_by_test_id("scan")
        expect(scan.locator('tr[data-plugin="pii-leakage"]')).to_contain_text("high")
        leak = scan.locator('[data-attack="pii-leakage/role-play/dump-records@lookup_customer"]')
        expect(leak).to_have_attribute("open", "")  # got through: opened
        expect(leak).to_contain_text("got through")
        expect(leak.get_by_test_id("lead-in")).to_have_count(3)
        expect(leak.get_by_test_id("attack-reason")).to_contain_text(
            "the answer contains the canary"
        )
        expect(leak.get_by_test_id("tool-call")).to_contain_text("lookup_customer")
        expect(leak.get_by_test_id("attack-answer")).to_contain_text(CANARY)
        held = scan.locator('[data-attack="off-topic/poem"]')
        expect(held).to_contain_text("held off")
        expect(held).to_contain_text("low")
        shot(page, tmp_path / "dashboard-scan.png")
    assert problems == []
