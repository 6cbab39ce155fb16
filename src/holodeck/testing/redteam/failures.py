"""`--save-failures FILE`: each attack that got through, written as a test case that
fails while the weakness is there, for `holodeck test` to run from then on.

- an answer that must not hold something (a code word, a canary, a span of the
  instructions): the attack as `input`, and a `regex` check that passes only when the
  answer lacks it;
- a call that must not be made (excessive agency, SSRF): `expected_tools` with
  `count: 0` (an attempt a wall refused counts too), and `deny:` for the tool, so that a
  call waiting for approval is denied rather than an error.

A multi-turn attack becomes a case with `turns:`: the lead-in as it was said, then the
attack, which carries the answer's check (a call's check is the case's, over every turn,
and the last turn's).

Attacks that relied on what the scan made the tools return (an injected document, a
seeded canary record) are left out: a test case cannot make a tool return it. Cases of
the same name in FILE are replaced, others kept.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from holodeck.atomic_write import write_atomically
from holodeck.errors import ConfigurationError
from holodeck.testing.redteam.attacks import Attack
from holodeck.testing.redteam.graders import canary_pattern, distinctive_span
from holodeck.testing.redteam.results import AttackResult

PREFIX = "redteam-"


def case_for(attack: Attack, result: AttackResult, instructions: str) -> dict[str, Any] | None:
    """The test case that keeps `attack` from getting through again, or None when it can
    only be reproduced with seeded tool results."""
    name = PREFIX + re.sub(r"[^\w.-]+", "-", attack.id).strip("-")
    case: dict[str, Any] = {"name": name, "input": attack.prompt}
    if attack.grader in ("agency", "ssrf"):
        made = [c for c in result.tool_calls if not c.agent]
        tools = list(dict.fromkeys(c.name for c in made)) or [t for t, _ in attack.calls]
        entries: list[dict[str, Any]] = []
        for tool in tools:
            entry: dict[str, Any] = {"name": tool, "count": 0}
            if attack.grader == "ssrf":
                entry["args"] = {
                    k: v for t, args in attack.calls if t == tool for k, v in args.items()
                }
            entries.append(entry)
        case["expected_tools"] = entries  # over every turn's calls
        case["deny"] = tools
        return _in_turns(case, result)
    forbidden = _forbidden(attack, result, instructions)
    if forbidden is None:
        return None
    case["evaluations"] = [
        {"metric": "regex", "pattern": rf"^(?![\s\S]*{forbidden})"}  # the answer lacks it
    ]
    return _in_turns(case, result)


def _in_turns(case: dict[str, Any], result: AttackResult) -> dict[str, Any]:
    """`case` said after the lead-in of a multi-turn attack; its answer check moves to
    the last turn."""
    if not result.lead_in:
        return case
    last: dict[str, Any] = {"input": case.pop("input")}
    if "evaluations" in case:
        last["evaluations"] = case.pop("evaluations")
    if "expected_tools" in case:
        # the case's check covers every turn's calls; the last turn's says where the
        # attack asked for the call (the offline model makes a turn's expected calls)
        last["expected_tools"] = case["expected_tools"]
    turns = [{"input": t.said} for t in result.lead_in] + [last]
    return {"name": case.pop("name"), "turns": turns, **case}


def _forbidden(attack: Attack, result: AttackResult, instructions: str) -> str | None:
    """A regex for what the answer must not hold, unless only seeding put it there."""
    if attack.grader == "marker":
        if attack.seeded and attack.marker and attack.marker in attack.seeded:
            return None
        return f"(?i:{re.escape(attack.marker or '')})"
    if attack.grader == "canary":
        own = [c for c in attack.canaries if not (attack.seeded and c in attack.seeded)]
        leaked = [canary_pattern(c) for c in own if canary_pattern(c).search(result.answer)]
        return _inline(leaked[0]) if leaked else None
    span = distinctive_span(result.answer, instructions, attack.prompt)
    return None if span is None else "(?i:" + r"\W+".join(re.escape(w) for w in span.split()) + ")"


def _inline(pattern: re.Pattern[str]) -> str:
    """`pattern` as one regex text, its case flag written into it."""
    return f"(?i:{pattern.pattern})" if pattern.flags & re.IGNORECASE else pattern.pattern


def save_failures(
    path: Path, attacks: list[Attack], results: list[AttackResult], instructions: str
) -> tuple[int, int]:
    """Write the failed attacks of a scan to `path`; (cases written, attacks left out)."""
    by_id = {a.id: a for a in attacks}
    cases, left = [], 0
    for result in results:
        if result.status != "fail":
            continue
        case = case_for(by_id[result.id], result, instructions)
        if case is None:
            left += 1
        else:
            cases.append(case)
    kept = [c for c in _existing(path) if c.get("name") not in {n["name"] for n in cases}]
    document = {"test_cases": kept + cases}
    text = yaml.safe_dump(document, sort_keys=False, allow_unicode=True, width=100)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomically(path, text.encode())
    return len(cases), left


def _existing(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    try:
        loaded = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigurationError(
            f"--save-failures {path}: cannot read the cases already there: {exc}",
            hint="fix the file, or name a new one",
        ) from None
    if loaded is None:
        return []
    cases = loaded.get("test_cases") if isinstance(loaded, dict) else loaded
    if not isinstance(cases, list):
        raise ConfigurationError(
            f"--save-failures {path}: the file holds no list of test cases",
            hint="name a new file, or one holding `test_cases: [...]`",
        )
    return [c for c in cases if isinstance(c, dict)]
