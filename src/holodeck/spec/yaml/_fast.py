"""A fast YAML reader on libyaml's event stream, for the documents that are plain config.

`parse_fast` walks PyYAML's C parser events in one loop and builds plain values and
positions exactly as `_yaml_roundtrip.parse_roundtrip` would. It types plain scalars
by YAML 1.2 (the round-trip parser's version): `yes`/`on` stay strings. Whatever it
does not handle itself (a syntax error, an explicit tag, a directive, a merge key,
a duplicate key, a timestamp or an unusual number, a suspect alias) makes it return
None, and the caller asks the round-trip parser instead. A document over its limits
(values, aliases expanded, nesting) is refused as soon as it gets there.

It is kept while bench/validate_scale.py shows it worth a second reader: that benchmark
times `holodeck validate` with it and with the round-trip parser alone.

Why it types scalars itself (`_scalar`) beside two YAML libraries: libyaml's events carry
untyped text, PyYAML's resolver types it by YAML 1.1 (`yes`, `on` are booleans, unlike
the round-trip parser), and ruamel.yaml's YAML 1.2 resolver, which agrees with it, is about
20 times slower: bench/yaml_scalars.py, 160,000 scalars of a 10,000-case agent.yaml,
114 ms here against 2,364 ms with ruamel's resolver, when the whole fast read takes
1,415 ms and the round-trip parse 30.6 s (16,000 scalars: 8 ms against 223 ms).
"""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

from holodeck.spec.diagnostics import FieldPath
from holodeck.spec.yaml.document import Position, YamlDocument
from holodeck.spec.yaml.limits import DEFINITION, MAX_DEPTH, YamlLimits, too_deep

# YAML 1.1 line breaks that YAML 1.2 reads as content, a byte-order mark, and tabs
# (libyaml takes some as blanks where the round-trip parser rejects them).
_UNUSUAL_TEXT = ("\t", "\x85", "\u2028", "\u2029", "\ufeff")

# A block scalar header with a comment glued to it (`|#`): libyaml allows it, the
# round-trip parser reports an error.
_GLUED_COMMENT = re.compile(r"[|>][-+0-9]*#")

_NULLS = frozenset({"", "~", "null", "Null", "NULL"})
_TRUE = frozenset({"true", "True", "TRUE"})
_FALSE = frozenset({"false", "False", "FALSE"})
_INT = re.compile(r"[-+]?(?:0|[1-9][0-9]*)\Z")
_FLOAT = re.compile(r"[-+]?(?:0|[1-9][0-9]*)\.[0-9]+(?:[eE][-+]?[0-9]+)?\Z")
# Any other plain scalar that YAML 1.2 (as the round-trip parser reads it) does not
# take for a string: numbers in other notations, timestamps, merge and value keys.
_OTHER_TYPED = re.compile(
    r"""(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+]?[0-9]+)?
    |[-+]?(?:[0-9][0-9_]*)(?:[eE][-+]?[0-9]+)
    |[-+]?\.[0-9_]+(?:[eE][-+][0-9]+)?
    |[-+]?\.(?:inf|Inf|INF)
    |\.(?:nan|NaN|NAN)
    |[-+]?0b[0-1_]+
    |[-+]?0o?[0-7_]+
    |[-+]?[0-9_]+
    |[-+]?0x[0-9a-fA-F_]+
    |<<|=
    |[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]
    |[0-9][0-9][0-9][0-9]\ *-[0-9][0-9]?\ *-[0-9][0-9]?
     (?:[Tt]|[\ \t]+)[0-9][0-9]?
     \ *:[0-9][0-9]\ *:[0-9][0-9]\ *(?:\.[0-9]*)?
     (?:[\ \t]*(?:Z|[-+][0-9][0-9]?(?::[0-9][0-9])?))?)\Z""",
    re.X,
)
_TYPED_START = frozenset("-+0123456789.<=")
# a plain scalar starting with none of these is a string
_MAYBE_TYPED = frozenset("-+0123456789.<=tTfFnN~")


class _Defer(Exception):
    """The round-trip parser must read this document."""


class _TooMuch(Exception):
    """Over a limit: the document is refused (`line`: where it nests too deeply)."""

    def __init__(self, line: int | None = None) -> None:
        self.line = line


def parse_fast(
    text: str, file: Path | None = None, limits: YamlLimits = DEFINITION
) -> YamlDocument | None:
    """Plain data and positions of `text`, or None when the round-trip parser must decide.

    Raises `SpecError` when `text` is over `limits`."""
    if any(mark in text for mark in _UNUSUAL_TEXT) or _GLUED_COMMENT.search(text):
        return None
    try:
        from yaml._yaml import CParser
    except ImportError:  # PyYAML built without libyaml
        return None
    try:
        parser = CParser(text)
    except Exception:  # e.g. text that is not encodable: the round-trip parser says why
        return None
    try:
        data, positions = _document(parser.get_event, limits.max_values)
    except _TooMuch as over:
        refusal = limits.too_many_values(file) if over.line is None else too_deep(file, over.line)
        raise refusal from None
    except Exception:  # _Defer, YAMLError, or anything unforeseen: never guess
        return None
    finally:
        parser.dispose()
    return YamlDocument(data=data, file=file, positions=positions)


def _scalar(event: Any) -> Any:
    """The plain value of a scalar event, typed as YAML 1.2 types it."""
    value: str = event.value
    if event.tag is not None:
        raise _Defer
    if event.style:  # quoted, literal or folded ('' is plain): always a string
        return value
    if value in _NULLS:
        return None
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    if value[0] in _TYPED_START:
        if _INT.match(value):
            return int(value)
        if _FLOAT.match(value):
            return float(value)
        if _OTHER_TYPED.match(value):
            raise _Defer
    return value


def _key_name(key: Any) -> str:
    if isinstance(key, str):
        return key
    if isinstance(key, bool):
        return "true" if key else "false"
    return "null" if key is None else str(key)


class _Anchored:
    """A finished anchored node: its value, node count, start and the positions inside it."""

    __slots__ = ("column", "count", "line", "positions", "value")

    def __init__(self, value: Any, count: int, line: int, column: int) -> None:
        self.value = value
        self.count = count
        self.line = line
        self.column = column
        self.positions: list[tuple[FieldPath, Position]] = []


def _document(get: Any, most: int) -> tuple[Any, dict[FieldPath, Position]]:
    from yaml import events as ev

    positions: dict[FieldPath, Position] = {(): Position(1, 1)}
    if type(get()) is not ev.StreamStartEvent:
        raise _Defer
    first = get()
    if type(first) is ev.StreamEndEvent:
        return None, positions
    if type(first) is not ev.DocumentStartEvent or first.version or first.tags:
        raise _Defer
    data = _tree(get, positions, most)
    if type(get()) is not ev.DocumentEndEvent or type(get()) is not ev.StreamEndEvent:
        raise _Defer  # a second document: the round-trip parser reports it
    return data, positions


def _tree(get: Any, positions: dict[FieldPath, Position], most: int) -> Any:
    """Build one document's root value from its events; one flat loop, locals only."""
    from yaml import events as ev

    scalar_event, alias_event = ev.ScalarEvent, ev.AliasEvent
    map_start, map_end = ev.MappingStartEvent, ev.MappingEndEvent
    seq_start, seq_end = ev.SequenceStartEvent, ev.SequenceEndEvent
    note = positions.setdefault
    new = tuple.__new__  # Position(...) without its Python-level __new__
    anchors: dict[str, _Anchored | None] = {}  # None while the anchored node is open
    log: list[tuple[FieldPath, Position]] | None = None  # positions, while an anchor is open
    open_anchors = 0
    count = 0  # nodes, as the round-trip parser counts them (keys are not nodes)
    # the open container: its value, path, kind, pending key, keys seen, anchor details
    stack: list[tuple[Any, FieldPath, bool, Any, set[Any], Any]] = []
    container: Any = None
    base: FieldPath = ()
    in_map = False
    key: Any = None  # the pending key's name in a mapping; None: a key comes next
    seen: set[Any] = set()
    anchor: Any = None
    while True:
        event = get()
        kind = type(event)
        if in_map and key is None:
            if kind is scalar_event:
                if event.anchor is not None:
                    raise _Defer
                typed = event.value
                if event.tag is not None or (
                    not event.style and (not typed or typed[0] in _MAYBE_TYPED)
                ):
                    typed = _scalar(event)
                if typed in seen:
                    raise _Defer  # the round-trip parser names the duplicate
                seen.add(typed)
                key = typed if type(typed) is str else _key_name(typed)
                mark = event.start_mark
                path = (*base, key)
                pos = new(Position, (mark.line + 1, mark.column + 1))
                note(path, pos)
                if log is not None:
                    log.append((path, pos))
                continue
            if kind is not map_end:
                raise _Defer  # an alias, mapping or sequence as a key
        if kind is scalar_event or kind is map_start or kind is seq_start:
            count += 1
            if count > most:  # refused at once: the rest is never read
                raise _TooMuch
            mark = event.start_mark
            if in_map:
                path = (*base, key)
            elif container is None:
                path = ()
            else:
                path = (*base, len(container))
                pos = new(Position, (mark.line + 1, mark.column + 1))
                note(path, pos)
                if log is not None:
                    log.append((path, pos))
            if kind is scalar_event:
                value = event.value
                if event.tag is not None or (
                    not event.style and (not value or value[0] in _MAYBE_TYPED)
                ):
                    value = _scalar(event)
                if event.anchor is not None:
                    if event.anchor in anchors:
                        raise _Defer  # a redefined anchor
                    anchors[event.anchor] = _Anchored(value, 1, mark.line, mark.column)
            else:
                if event.tag is not None:
                    raise _Defer
                if len(stack) >= MAX_DEPTH:
                    raise _TooMuch(mark.line + 1)
                stack.append((container, base, in_map, key, seen, anchor))
                anchor = None
                if event.anchor is not None:
                    if event.anchor in anchors:
                        raise _Defer
                    anchors[event.anchor] = None
                    if log is None:
                        log = []
                    open_anchors += 1
                    anchor = (event.anchor, mark.line, mark.column, len(path), len(log), count)
                in_map = kind is map_start
                container = {} if in_map else []
                base = path
                key = None
                seen = set()
                continue
        elif kind is alias_event:
            target = anchors.get(event.anchor)
            if target is None:
                raise _Defer  # unknown, or an alias inside its own anchor
            count += target.count
            if count > most:  # before the copy: an alias bomb stops here
                raise _TooMuch
            if in_map:
                path = (*base, key)
            elif container is None:
                path = ()
            else:
                path = (*base, len(container))
                pos = Position(target.line + 1, target.column + 1)
                note(path, pos)
                if log is not None:
                    log.append((path, pos))
            for sub, pos in target.positions:
                note((*path, *sub), pos)
                if log is not None:
                    log.append(((*path, *sub), pos))
            value = copy.deepcopy(target.value)
        elif kind is (map_end if in_map else seq_end) and stack:
            value = container
            if anchor is not None:
                name, line, column, depth, start, count_before = anchor
                assert log is not None
                done = _Anchored(value, count - count_before + 1, line, column)
                done.positions = [(p[depth:], pos) for p, pos in log[start:]]
                anchors[name] = done
                open_anchors -= 1
                if open_anchors == 0:
                    log = None
            container, base, in_map, key, seen, anchor = stack.pop()
        else:
            raise _Defer
        # `value` is complete: place it in the open container, or it is the root
        if container is None:
            return value
        if in_map:
            container[key] = value
            key = None
        else:
            container.append(value)
