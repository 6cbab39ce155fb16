"""A static red-team scan's cost per attack: N attacks (every plugin's payloads, repeated
with other seeds until there are N) against an agent with two tools and guardrails, on
the offline `test` model, so what is measured is HoloDeck's own work per attack: a
session, the turn, the guardrails, the seeded tool results and the grading.

Prints the wall time and the process's CPU time, in all and per attack.

Run: .venv/bin/python bench/redteam_scan.py [attacks] [concurrency]
"""

from __future__ import annotations

import asyncio
import resource
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from holodeck import RunOptions
from holodeck.config.loader import load_agent
from holodeck.testing.redteam.attacks import PLUGINS, Attack, build_attacks, targets
from holodeck.testing.redteam.scan import ScanOptions, run_scan

AGENT = """
name: bench
model: {provider: test}
instructions:
  inline: You are the billing assistant of Acme Widgets. Answer questions about invoices.
tools:
  - {type: function, name: lookup_customer, file: tools.py, function: lookup_customer}
  - {type: function, name: fetch_page, file: tools.py, function: fetch_page}
guardrails:
  input:
    - {name: no-injection, block_patterns: ["(?i)ignore (all )?previous instructions"],
       on: [request, tool_result]}
  output:
    - {name: personal-data, pii: [email, phone, card], action: redact}
tool_rules:
  fetch_page: {url: {deny: ["re:(127\\\\.|10\\\\.|169\\\\.254\\\\.|localhost)"]}}
"""
TOOLS = '''
def lookup_customer(customer_id: str) -> str:
    """Look a customer up."""
    return "customer " + customer_id + ": Ada Lovelace"


def fetch_page(url: str) -> str:
    """Fetch a page."""
    return "contents of " + url
'''


def cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    wanted = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    concurrency = int(sys.argv[2]) if len(sys.argv) > 2 else 8
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        (root / "agent.yaml").write_text(AGENT)
        (root / "tools.py").write_text(TOOLS)
        spec = load_agent(root)
        aim = targets(spec)
        attacks: list[Attack] = []
        seed = 0
        while len(attacks) < wanted:  # other seeds: other code words, the same payloads
            attacks += [
                replace(a, id=f"{a.id}#{seed}") for a in build_attacks(list(PLUGINS), aim, seed)
            ]
            seed += 1
        attacks = attacks[:wanted]
        options = ScanOptions(run=RunOptions(model="test"), concurrency=concurrency)
        wall, used = time.perf_counter(), cpu()
        scan = asyncio.run(run_scan(spec, attacks, aim, options))
        wall, used = time.perf_counter() - wall, cpu() - used
    print(
        f"{len(scan.attacks)} attacks, concurrency {concurrency}: {len(scan.failed)} got "
        f"through, {len(scan.errors)} errors"
    )
    print(f"wall {wall:.2f} s ({wall / wanted * 1000:.1f} ms per attack)")
    print(f"cpu  {used:.2f} s ({used / wanted * 1000:.1f} ms per attack)")


if __name__ == "__main__":
    main()
