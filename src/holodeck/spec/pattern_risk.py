"""What `validate` says of a guardrail's regular expressions that can take time growing
exponentially with the length of a text: a repeat whose body can match one stretch of
text in more than one way (`(a+)+`, `(\\w+\\s?)*`, `(a|aa)+`, `(x+x+)+y`). At run time a
check's patterns are stopped after their time bound and the text then counts as
matched (a guardrail fails closed), so such a pattern would block messages it was never
meant to: the warning says so before that happens. A warning, an error with `--strict`.

The test is on Python's own parse of the pattern: inside a repeat of more than one, a
part of variable width (itself a repeat, an optional part or an alternation) is
ambiguous when a character it can start with could also start what comes after it
(the rest of the body, or the body again). Possessive repeats and atomic groups never
backtrack, so they are not reported."""

from __future__ import annotations

import string
import warnings
from collections.abc import Sequence
from typing import Any

from holodeck.spec.diagnostics import Collector, Severity
from holodeck.spec.models.guardrails import Guardrails
from holodeck.spec.yaml.document import YamlDocument

with warnings.catch_warnings():  # the stdlib's regex parser, under its public name
    warnings.simplefilter("ignore", DeprecationWarning)
    import sre_compile
    import sre_parse

# one (opcode, argument) of a parsed pattern; its argument's shape depends on the opcode
Item = tuple[Any, Any]
# the characters a part's first-character set is sampled on
SAMPLE = string.printable + "\u00a0\u00e9\u0430\u4e2d\u0661"
REPEATS = (sre_parse.MAX_REPEAT, sre_parse.MIN_REPEAT)
SINGLE = (sre_parse.LITERAL, sre_parse.NOT_LITERAL, sre_parse.ANY, sre_parse.IN)


def check_guard_patterns(
    guardrails: Guardrails | None,
    doc: YamlDocument,
    collector: Collector,
    *,
    strict: bool = False,
) -> None:
    """Report, at its line, each `block_patterns` entry that can backtrack without end."""
    if guardrails is None:
        return
    severity = Severity.ERROR if strict else Severity.WARNING
    for side in ("input", "output"):
        for index, check in enumerate(getattr(guardrails, side)):
            for position, pattern in enumerate(check.block_patterns or []):
                if not backtracks(pattern):
                    continue
                collector.add(
                    doc.diagnostic(
                        ("guardrails", side, index, "block_patterns", position),
                        f"`{pattern}` can take time that doubles with each character of "
                        "some texts: a repeat inside it can match the same text in many "
                        "ways, and a check whose patterns run out of time blocks the text",
                        hint="let each character be matched one way only (`(a+)+` is "
                        "`a+`), or make the inner repeat possessive (`a++`) or atomic "
                        "(`(?>a+)`)",
                        severity=severity,
                    )
                )


def backtracks(pattern: str) -> bool:
    """Whether `pattern` holds a repeat whose body is ambiguous (see the module)."""
    try:
        parsed = sre_parse.parse(pattern)
    except (sre_parse.error, RecursionError):  # a bad pattern is reported on its own
        return False
    return _any_ambiguous(parsed, parsed.state.flags)


def _any_ambiguous(items: sre_parse.SubPattern, flags: int) -> bool:
    for op, arg in _items(items):
        if op in REPEATS:
            _, high, body = arg
            if high > 1 and _ambiguous(body, flags):
                return True
        for inner in _children(op, arg):
            if _any_ambiguous(inner, flags):
                return True
    return False


def _children(op: object, arg: Any) -> list[sre_parse.SubPattern]:
    """The parts nested in one item; an atomic group's never backtrack."""
    if op in REPEATS:
        return [arg[2]]
    if op is sre_parse.SUBPATTERN:
        return [arg[3]]
    if op is sre_parse.BRANCH:
        return list(arg[1])
    if op in (sre_parse.ASSERT, sre_parse.ASSERT_NOT):
        return [arg[1]]
    return []


def _ambiguous(body: sre_parse.SubPattern, flags: int) -> bool:
    items = _flat(_items(body))
    whole = _first(body, items, flags)
    for index, item in enumerate(items):
        if not _variable(body, item):
            continue
        rest = items[index + 1 :]
        follow = _first(body, rest, flags)
        if _nullable(body, rest):
            follow |= whole
        if _first(body, [item], flags) & follow:
            return True
    return False


def _flat(items: Sequence[Item]) -> list[Item]:
    """`items` with groups opened: a group changes what is captured, not what matches."""
    flat: list[Item] = []
    for op, arg in items:
        if op is sre_parse.SUBPATTERN:
            flat += _flat(_items(arg[3]))
        else:
            flat.append((op, arg))
    return flat


def _items(part: sre_parse.SubPattern) -> list[Item]:
    return list(part.data)


def _variable(body: sre_parse.SubPattern, item: Item) -> bool:
    op, _ = item
    if op in (sre_parse.POSSESSIVE_REPEAT, sre_parse.ATOMIC_GROUP):
        return False
    low, high = sre_parse.SubPattern(body.state, [item]).getwidth()
    return low != high


def _nullable(body: sre_parse.SubPattern, items: Sequence[Item]) -> bool:
    if not items:
        return True
    part = sre_parse.SubPattern(body.state, list(items))
    return part.getwidth()[0] == 0


def _first(body: sre_parse.SubPattern, items: Sequence[Item], flags: int) -> set[str]:
    """The sample characters a match of `items` can start with."""
    found: set[str] = set()
    for item in items:
        found |= _first_of(body, item, flags)
        if not _nullable(body, [item]):
            break
    return found


def _first_of(body: sre_parse.SubPattern, item: Item, flags: int) -> set[str]:
    op, arg = item
    if op in SINGLE:
        part = sre_parse.SubPattern(body.state, [item])
        matcher = sre_compile.compile(part, flags)
        return {c for c in SAMPLE if matcher.fullmatch(c)}
    if op in REPEATS or op is sre_parse.POSSESSIVE_REPEAT:
        return set() if arg[1] == 0 else _first(body, _items(arg[2]), flags)
    if op is sre_parse.SUBPATTERN:
        return _first(body, _items(arg[3]), flags)
    if op is sre_parse.ATOMIC_GROUP:
        return _first(body, _items(arg), flags)
    if op is sre_parse.BRANCH:
        return set().union(*(_first(body, _items(alt), flags) for alt in arg[1]))
    if op in (sre_parse.GROUPREF, sre_parse.GROUPREF_EXISTS):
        return set(SAMPLE)  # what a back reference repeats is not known here
    return set()  # anchors and lookarounds take no character
