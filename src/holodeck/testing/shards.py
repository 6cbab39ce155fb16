"""Shards: one slice of a suite, so that a CI matrix or a Kubernetes Indexed Job runs the
cases on several machines and `holodeck test merge` puts the runs back together.

Shard I of N takes the selected cases at positions I-1, I-1+N, I-1+2N... of the
definition's order (after --case/-k). Position, not a hash of the name: every shard gets
the same number of cases, give or take one (a hash leaves small suites lopsided, even
empty shards), neighbouring cases, often alike in cost, land on different machines, and
nothing depends on the interpreter (PYTHONHASHSEED) or the machine. Every shard of a
split must read the same definition with the same filters, which `merge` checks through
the agent's name and prompt version.

    >>> shard = Shard.parse("2/3")
    >>> shard.take(["a", "b", "c", "d", "e"])
    ['b', 'e']
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeVar

T = TypeVar("T")

FORM = "I/N, with 1 <= I <= N (e.g. 2/4)"
_SHAPE = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")


@dataclass(frozen=True, order=True)
class Shard:
    index: int  # 1-based
    count: int

    @classmethod
    def parse(cls, text: str) -> Shard:
        """`I/N`; raises ValueError naming the form for anything else."""
        match = _SHAPE.match(text)
        if match is None:
            raise ValueError(f"{text!r} is not a shard: write {FORM}")
        index, count = int(match[1]), int(match[2])
        if count < 1 or not 1 <= index <= count:
            raise ValueError(f"{text!r} is not a shard: write {FORM}")
        return cls(index, count)

    def take(self, items: Sequence[T]) -> list[T]:
        """This shard's slice of `items`, in their order."""
        return list(items[self.index - 1 :: self.count])

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def interleave(slices: Sequence[Sequence[T]]) -> list[T]:
    """Undo `take`: the whole list from every shard's slice, given in shard order."""
    whole: list[T] = []
    longest = max((len(s) for s in slices), default=0)
    for position in range(longest):
        whole.extend(s[position] for s in slices if position < len(s))
    return whole
