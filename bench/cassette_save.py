"""Saving a cassette after every exchange: appending what is new vs rewriting the file.

Run: .venv/bin/python bench/cassette_save.py [N ...]   (default: 100 1000)

A recording run of N exchanges calls `save()` after each one. Appending costs what each
save adds; the whole-file rewrite that cassettes used before (dump every interaction,
write a temporary file, fsync, rename) costs what the file holds, so a run pays
O(N^2). Rewrites are timed at every size up to 100 exchanges; beyond, at five sizes,
with the total estimated from a straight line through them (each rewrite grows
linearly with the file).
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart
from pydantic_ai.models import ModelRequestParameters
from pydantic_ai.models.function import AgentInfo, FunctionModel

from holodeck.atomic_write import write_atomically
from holodeck.llm.cassette import HEADER, Cassette
from holodeck.llm.cassette._file import _dump_yaml, read_interactions
from holodeck.llm.providers import BuiltModel

FULLY_MEASURED_UP_TO = 100
ANSWER = "A sentence of a typical answer, long enough to look like one. " * 5


def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    return ModelResponse(parts=[TextPart(ANSWER + "\nSecond paragraph.")])


async def record(path: Path, count: int, *, durable: bool) -> list[float]:
    """Seconds taken by each save of a run recording `count` exchanges, one per save."""
    cassette = Cassette.record(path, env={})
    built = cassette.wrap(
        BuiltModel(model=FunctionModel(answer), settings={}, provider="test", name=None)
    )
    took = []
    for number in range(count):
        question = ModelRequest.user_text_prompt(f"question {number}")
        await built.model.request([question], None, ModelRequestParameters())
        start = time.perf_counter()
        if durable:
            await cassette.asave()
        else:
            cassette.save()
        took.append(time.perf_counter() - start)
    return took


def rewrite(path: Path, interactions: list[dict[str, Any]]) -> float:
    """Seconds for one whole-file save, as cassettes did it before."""
    start = time.perf_counter()
    text = HEADER + _dump_yaml({"version": 1, "interactions": interactions})
    write_atomically(path, text.encode(), mode=0o600)
    return time.perf_counter() - start


def rewrites(path: Path, interactions: list[dict[str, Any]]) -> tuple[float, str]:
    """Total seconds of rewriting the file after each of the exchanges, and how it was had."""
    count = len(interactions)
    if count <= FULLY_MEASURED_UP_TO:
        return sum(rewrite(path, interactions[:k]) for k in range(1, count + 1)), "measured"
    sizes = [count * step // 5 for step in range(1, 6)]
    costs = [rewrite(path, interactions[:k]) for k in sizes]
    slope, intercept = statistics.linear_regression(sizes, costs)
    total = sum(intercept + slope * k for k in range(1, count + 1))
    return total, f"estimated from rewrites at {', '.join(map(str, sizes))}"


def main() -> None:
    counts = [int(a) for a in sys.argv[1:]] or [100, 1000]
    with tempfile.TemporaryDirectory() as directory:
        for count in counts:
            appended = Path(directory) / f"append-{count}.yaml"
            plain = asyncio.run(record(appended, count, durable=False))
            durable = asyncio.run(
                record(Path(directory) / f"sync-{count}.yaml", count, durable=True)
            )
            size = appended.stat().st_size
            whole, how = rewrites(Path(directory) / "whole.yaml", read_interactions(appended))
            written = sum(size * k // count for k in range(1, count + 1))
            print(f"N={count} exchanges, a save after each (file ends at {size / 1e3:.0f} kB)")
            for label, total, note in (
                ("append, save()", sum(plain), f"last save {plain[-1] * 1e3:.2f} ms"),
                ("append + fsync, asave()", sum(durable), f"last save {durable[-1] * 1e3:.2f} ms"),
                ("whole-file rewrite (before)", whole, how),
            ):
                print(f"  {label:<28} {total:9.3f} s  {total / count * 1e3:8.2f} ms/save  {note}")
            print(
                f"  rewrite / append: {whole / sum(plain):.0f}x (save), "
                f"{whole / sum(durable):.0f}x (asave); bytes written: "
                f"{size / 1e6:.2f} MB appended vs ~{written / 1e6:.1f} MB rewritten"
            )


if __name__ == "__main__":
    main()
