"""How large and how complex a YAML or JSON document HoloDeck reads.

A file's size is checked before it is read; its values, nesting and alias expansion
while it is parsed (libyaml's event stream counts them before the slow round-trip
parser builds anything). An oversized or hostile document (an upload, an alias bomb)
is refused in about a second, naming the limit, instead of costing minutes and
gigabytes.

Definition files (agent.yaml, config.yaml, MCP files, the global config, skill
frontmatter, response_format files) and test case files (`test_cases_file`, an image's
tests/) have their own limits; an environment variable raises each:

    >>> DEFINITION.max_bytes, DEFINITION.max_values, MAX_DEPTH
    (8388608, 200000, 100)
    >>> TEST_CASES.variables
    ('HOLODECK_MAX_TEST_CASES_MB', 'HOLODECK_MAX_TEST_CASES_VALUES')
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from holodeck.spec.diagnostics import Diagnostic, SpecError

# No definition nests this deep; the round-trip parser recurses per level.
MAX_DEPTH = 100
_MB = 1024 * 1024


class LimitError(SpecError):
    """A document over a limit (not a syntax error: no other parser should be tried)."""


@dataclass(frozen=True)
class YamlLimits:
    """The limits of one kind of file; `HOLODECK_MAX_<NAME>_MB` and `_VALUES` raise them."""

    kind: str  # as a message names it: "definition file"
    name: str  # of the variables: DEFINITION
    default_mb: int
    default_values: int
    advice: str = ""  # said first when a file is over a limit

    @property
    def variables(self) -> tuple[str, str]:
        return (f"HOLODECK_MAX_{self.name}_MB", f"HOLODECK_MAX_{self.name}_VALUES")

    @property
    def max_bytes(self) -> int:
        return _setting(self.variables[0], self.default_mb) * _MB

    @property
    def max_values(self) -> int:
        return _setting(self.variables[1], self.default_values)

    def check_length(self, size: int, file: Path | None) -> None:
        """Refuse a document of `size` bytes over the limit."""
        if size > self.max_bytes:
            raise LimitError(
                [
                    Diagnostic(
                        f"{_mb(size)} MB is over the {_mb(self.max_bytes)} MB limit of a "
                        f"{self.kind}",
                        file=file,
                        hint=self._hint(f"{self.variables[0]}={math.ceil(size / _MB)}"),
                    )
                ]
            )

    def too_many_values(self, file: Path | None) -> LimitError:
        return LimitError(
            [
                Diagnostic(
                    f"document expands to more than {self.max_values} values "
                    f"(the limit of a {self.kind})",
                    file=file,
                    hint=self._hint(
                        f"{self.variables[1]}={self.max_values * 4}",
                        "an alias (*name) counts every value of its anchor again",
                    ),
                )
            ]
        )

    def _hint(self, raise_it: str, *also: str) -> str:
        ways = [self.advice] if self.advice else []
        return "; ".join([*ways, *also, f"or raise the limit: {raise_it}"])


def too_deep(file: Path | None, line: int | None = None) -> LimitError:
    return LimitError(
        [
            Diagnostic(
                f"values nest more than {MAX_DEPTH} levels deep",
                file=file,
                line=line,
                hint="flatten the structure",
            )
        ]
    )


DEFINITION = YamlLimits(
    "definition file",
    "DEFINITION",
    8,
    200_000,
    advice="keep test cases in a `test_cases_file`, whose limits are larger",
)
TEST_CASES = YamlLimits("test cases file", "TEST_CASES", 64, 2_000_000)


def read_limited(path: Path, limits: YamlLimits) -> bytes:
    """The bytes of `path`, refused before reading when over `limits` (a file that grows
    meanwhile, or reports no size, is read no further than the limit). Raises OSError."""
    with path.open("rb") as file:
        limits.check_length(os.fstat(file.fileno()).st_size, path)
        data = file.read(limits.max_bytes + 1)
    limits.check_length(len(data), path)
    return data


def check_structure(text: str, file: Path | None, limits: YamlLimits) -> None:
    """Refuse `text` when it nests too deeply or expands (aliases included) to too many
    values, reading only libyaml's event stream. A syntax error ends the check quietly:
    the parser that follows reports it, with its line."""
    from yaml import YAMLError
    from yaml import events as ev

    try:
        from yaml._yaml import CParser

        parser: Any = CParser(text)
    except ImportError:  # PyYAML without libyaml: its Python parser
        from yaml import SafeLoader

        parser = SafeLoader(text)
    except Exception:  # text libyaml cannot take: the parser that follows says why
        return
    starts = (ev.MappingStartEvent, ev.SequenceStartEvent)
    ends = (ev.MappingEndEvent, ev.SequenceEndEvent)
    most = limits.max_values
    count = 0  # values, as the round-trip parser counts them (keys are not values)
    sizes: dict[str, int] = {}  # values under each closed anchor
    # per open collection: anchor, count when it opened, a mapping?, a key comes next?
    stack: list[list[Any]] = []
    try:
        while True:
            event = parser.get_event()
            if event is None or isinstance(event, ev.StreamEndEvent):
                return
            if isinstance(event, ends):
                anchor, start, _, _ = stack.pop()
                if anchor is not None:
                    sizes[anchor] = count - start + 1
                continue
            if not isinstance(event, ev.NodeEvent):
                continue
            event_any: Any = event  # the stubs leave anchor and mark optional
            parent = stack[-1] if stack else None
            is_key = parent is not None and parent[2] and parent[3]
            if parent is not None and parent[2]:
                parent[3] = not parent[3]
            if not is_key:
                alias = isinstance(event, ev.AliasEvent)
                count += sizes.get(event_any.anchor, 1) if alias else 1
                if count > most:
                    raise limits.too_many_values(file)
            if isinstance(event, starts):
                stack.append([event.anchor, count, isinstance(event, ev.MappingStartEvent), True])
                if len(stack) > MAX_DEPTH:
                    raise too_deep(file, event_any.start_mark.line + 1)
            elif event.anchor is not None and not isinstance(event, ev.AliasEvent):
                sizes[event.anchor] = 1
    except YAMLError as exc:
        # libyaml stops at its own nesting limit while scanning ahead, before the events
        # get that deep here; past it the round-trip parser would recurse for seconds
        if "nesting depth" in str(getattr(exc, "problem", "")):
            mark = getattr(exc, "problem_mark", None)
            raise too_deep(file, mark.line + 1 if mark is not None else None) from None
        return
    finally:
        if hasattr(parser, "dispose"):
            parser.dispose()


def _setting(variable: str, default: int) -> int:
    raw = os.environ.get(variable, "").strip()
    if not raw:
        return default
    try:
        value = int(raw.replace("_", ""))
    except ValueError:
        value = 0
    if value < 1:
        raise SpecError(
            [
                Diagnostic(
                    f"{variable}={raw!r} is not a whole number above 0",
                    hint=f"unset it for the default ({default}), or give e.g. {default * 4}",
                )
            ]
        )
    return value


def _mb(size: int) -> float:
    return round(size / _MB, 1)
