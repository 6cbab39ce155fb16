"""Typing plain YAML scalars: the fast reader's own typer against ruamel.yaml's YAML 1.2
resolver, the library alternative (PyYAML's resolver types by YAML 1.1, where `yes` and
`on` are booleans, so it would disagree with the round-trip parser).

Run: PYTHONPATH=src .venv/bin/python bench/yaml_scalars.py [cases]
Reads an agent.yaml with `cases` test cases (default 10,000) through libyaml's event
stream, then types every scalar event both ways (median of 5 runs each) and, for scale,
times the whole fast parse and the round-trip parse of the same text.
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

from ruamel.yaml.nodes import ScalarNode
from ruamel.yaml.resolver import VersionedResolver
from yaml import ScalarEvent
from yaml._yaml import CParser

from holodeck.spec.yaml._fast import _scalar, parse_fast
from holodeck.spec.yaml._roundtrip import parse_roundtrip

CASE = """\
  - name: case {i}
    input: "What is the weather in city {i}? yes, on, 3.5"
    ground_truth: It is sunny in city {i}.
    expected_tools: [get_weather]
    retry: {i}
    threshold: 0.{i}
    enabled: true
    notes: ~
"""


def document(cases: int) -> str:
    head = "name: scale\nmodel:\n  provider: openai\n  name: gpt-4o\ntest_cases:\n"
    return head + "".join(CASE.format(i=i) for i in range(cases))


def scalar_events(text: str) -> list[Any]:
    parser = CParser(text)
    events = []
    while (event := parser.get_event()) is not None:
        if isinstance(event, ScalarEvent):
            events.append(event)
        if type(event).__name__ == "StreamEndEvent":
            break
    parser.dispose()
    return events


_RESOLVER = VersionedResolver(version=(1, 2))
_CONSTRUCT: dict[str, Callable[[str], Any]] = {
    "tag:yaml.org,2002:null": lambda v: None,
    "tag:yaml.org,2002:bool": lambda v: v.lower() == "true",
    "tag:yaml.org,2002:int": int,
    "tag:yaml.org,2002:float": float,
    "tag:yaml.org,2002:str": str,
}


def library_scalar(event: Any) -> Any:
    """The same value typed by ruamel.yaml's YAML 1.2 resolver."""
    if event.style:
        return event.value
    tag = _RESOLVER.resolve(ScalarNode, event.value, (True, False))
    return _CONSTRUCT[str(tag)](event.value)


def median_ms(work: Callable[[], object], runs: int = 5) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        work()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main() -> None:
    cases = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    text = document(cases)
    events = scalar_events(text)
    own = [_scalar(e) for e in events]
    assert own == [library_scalar(e) for e in events], "the two typers disagree"
    print(f"{cases} cases, {len(events)} scalars")
    print(f"  own typer      {median_ms(lambda: [_scalar(e) for e in events]):8.1f} ms")
    print(f"  ruamel 1.2     {median_ms(lambda: [library_scalar(e) for e in events]):8.1f} ms")
    print(f"  parse_fast     {median_ms(lambda: parse_fast(text)):8.1f} ms (whole read)")
    print(f"  round-trip     {median_ms(lambda: parse_roundtrip(text), runs=1):8.1f} ms")


if __name__ == "__main__":
    main()
