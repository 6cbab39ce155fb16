"""HTML to text: the title, then headings (as `#` lines), paragraphs, list items and
preformatted text; scripts, styles and navigation are dropped."""

from __future__ import annotations

import re
from html.parser import HTMLParser

# --- HTML to text --------------------------------------------------------------------

# Elements whose content is never readable text (or is page chrome, like navigation).
SKIPPED = frozenset(
    {
        "script",
        "style",
        "noscript",
        "template",
        "svg",
        "math",
        "nav",
        "iframe",
        "object",
        "embed",
        "canvas",
        "select",
        "datalist",
    }
)
BLOCKS = frozenset(
    {
        "address",
        "article",
        "aside",
        "blockquote",
        "body",
        "caption",
        "center",
        "dd",
        "details",
        "dialog",
        "div",
        "dl",
        "dt",
        "fieldset",
        "figcaption",
        "figure",
        "footer",
        "form",
        "header",
        "hgroup",
        "hr",
        "main",
        "ol",
        "p",
        "pre",
        "section",
        "summary",
        "table",
        "tbody",
        "thead",
        "tfoot",
        "tr",
        "ul",
    }
)
HEADINGS = {f"h{level}": level for level in range(1, 7)}
_SPACES = re.compile(r"\s+")


class _TextExtractor(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.out: list[str] = []
        self.title: list[str] = []
        self.skipping: list[str] = []  # open elements whose content is dropped
        self.in_title = False
        self.title_done = False
        self.pre = 0
        self.started = False  # any body text yet
        self.newlines = 0  # newlines at the end of the output
        self.pending_space = False  # a space is due before the next word

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in SKIPPED:
            self.skipping.append(tag)
        if self.skipping:
            return
        if tag == "title" and not self.title_done:
            self.in_title = True
        elif tag in HEADINGS:
            self._break(2)
            self._emit("#" * HEADINGS[tag] + " ")
        elif tag == "li":
            self._break(1)
            self._emit("- ")
        elif tag == "br":
            self.pending_space = False
            if self.newlines < 2:
                self._emit("\n")
        elif tag in ("td", "th"):
            self.pending_space = True
        elif tag in BLOCKS:
            self._break(2)
            if tag == "pre":
                self.pre += 1

    def handle_endtag(self, tag: str) -> None:
        if tag in self.skipping:
            while self.skipping and self.skipping.pop() != tag:
                pass
            return
        if self.skipping:
            return
        if tag == "title" and self.in_title:
            self.in_title = False
            self.title_done = True
        elif tag in HEADINGS or tag in BLOCKS:
            if tag == "pre" and self.pre:
                self.pre -= 1
            self._break(2)
        elif tag == "li":
            self._break(1)

    def handle_data(self, data: str) -> None:
        if self.skipping:
            return
        if self.in_title:
            self.title.append(data)
            return
        if self.pre:
            self._emit(data)
            return
        text = _SPACES.sub(" ", data)
        word = text.strip(" ")
        if not word:
            self.pending_space = self.pending_space or bool(text)
            return
        if (self.pending_space or text.startswith(" ")) and self.started and not self.newlines:
            word = " " + word
        self._emit(word)
        self.pending_space = text.endswith(" ")

    def _emit(self, text: str) -> None:
        self.out.append(text)
        self.started = True
        self.pending_space = False
        kept = text.rstrip("\n")
        self.newlines = len(text) - len(kept) if kept else self.newlines + len(text)

    def _break(self, count: int) -> None:
        """End the line; `count` 2 leaves a blank line after it."""
        self.pending_space = False
        if self.started and self.newlines < count:
            self._emit("\n" * (count - self.newlines))

    def text(self) -> str:
        title = _SPACES.sub(" ", "".join(self.title)).strip()
        lines = [line.rstrip() for line in "".join(self.out).split("\n")]
        body = re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip("\n")
        return f"{title}\n\n{body}".strip() if title else body


def html_to_text(html: str) -> str:
    """Readable text of an HTML page: the title, then headings (as `#` lines), paragraphs,
    list items and preformatted text; scripts, styles and navigation are dropped."""
    parser = _TextExtractor()
    parser.feed(html)
    parser.close()
    return parser.text()
