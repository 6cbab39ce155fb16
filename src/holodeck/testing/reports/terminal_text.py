"""Text for a terminal: indented and wrapped without padding, with what would drive the
terminal (an ANSI escape in an agent's output) or what it cannot encode shown as escapes."""

from __future__ import annotations

from rich.console import Console
from rich.text import Text

from holodeck.testing.reports._format import CONTROL, visible

__all__ = ["print_labelled", "print_text", "printable"]


def print_text(console: Console, text: Text, indent: int = 0) -> None:
    """Print `text` indented, wrapped lines included, without padding lines with spaces."""
    text = printable(text, console)
    width = max(console.width - indent, 20)
    for line in text.split("\n", allow_blank=True):
        for part in line.wrap(console, width):
            part.rstrip()
            console.print(Text(" " * indent) + part, soft_wrap=True)


def printable(text: Text, console: Console) -> Text:
    """The same text with control characters (e.g. an ANSI escape in an agent's output)
    shown as escapes, and on a console that is not UTF-8, what it cannot encode too."""
    encoding = console.encoding
    try:
        text.plain.encode(encoding)
        clean = CONTROL.search(text.plain) is None
    except (UnicodeEncodeError, LookupError):
        clean = False
    if clean:
        return text
    out = Text()
    for segment in text.render(console):
        out.append(_plain(segment.text, encoding), segment.style)
    return out


def _plain(value: str, encoding: str) -> str:
    value = visible(value)
    try:
        return value.encode(encoding, "backslashreplace").decode(encoding)
    except LookupError:
        return value


def print_labelled(console: Console, label: str, text: Text, indent: int) -> None:
    """`label` then `text`, whose wrapped lines start under its first character."""
    text = printable(text, console)
    width = max(console.width - indent - len(label), 20)
    first = True
    for line in text.split("\n", allow_blank=True):
        for part in line.wrap(console, width):
            part.rstrip()
            lead = Text(label, style="bold") if first else Text(" " * len(label))
            console.print(Text(" " * indent) + lead + part, soft_wrap=True)
            first = False
