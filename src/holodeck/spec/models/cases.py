"""Test cases (agent.yaml `test_cases:`, image `tests/*.yaml`)."""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import Field, field_validator, model_validator

from holodeck.spec.models.base import NonEmpty, Strict
from holodeck.spec.models.case_workspace import CaseWorkspace, ExpectedFiles, check_expected_paths
from holodeck.spec.models.evaluations import Metric

MATCHER_KEYS = frozenset({"equals", "regex", "contains", "approx", "tolerance", "ignore"})


class ExpectedTool(Strict):
    """A tool the agent must call, optionally with argument checks and a call count. A call
    that failed (the tool raised, or its MCP server answered with an error) meets it only
    with `allow_error: true`.

    Each entry of `args` is a value the argument must equal, or one matcher:
    `{regex: "^Par"}`, `{contains: "paris"}` (case-insensitive), `{approx: 20,
    tolerance: 0.5}`, `{ignore: true}`, or `{equals: {...}}` to compare a mapping exactly.
    """

    name: NonEmpty
    args: dict[str, Any] = Field(default_factory=dict)
    count: Annotated[int, Field(ge=0)] | None = Field(
        default=None, description="Exact number of calls; default: at least one."
    )
    allow_error: bool = Field(
        default=False,
        description="Failed calls count too (the case expects the tool to fail); by default "
        "only calls that succeeded meet the expectation.",
    )

    @field_validator("args")
    @classmethod
    def _matchers(cls, args: dict[str, Any]) -> dict[str, Any]:
        for name, expected in args.items():
            if not (isinstance(expected, dict) and expected and set(expected) <= MATCHER_KEYS):
                continue
            if "regex" in expected:
                try:
                    re.compile(str(expected["regex"]))
                except re.error as exc:
                    raise ValueError(f"args.{name}: invalid regex: {exc}") from None
            if "tolerance" in expected and "approx" not in expected:
                raise ValueError(f"args.{name}: `tolerance` needs `approx`")
            if "approx" in expected and not isinstance(expected["approx"], int | float):
                raise ValueError(f"args.{name}: `approx` must be a number")
            if len(set(expected) - {"tolerance"}) != 1:
                raise ValueError(f"args.{name}: give one matcher of {sorted(MATCHER_KEYS)}")
        return args


ExpectedTools = list[NonEmpty | ExpectedTool]
ToolOrder = Literal["any", "in_order", "exact"]


FileKind = Literal["image", "pdf", "text", "csv", "excel", "word", "powerpoint", "file"]
# file name endings -> kind, for files written without `type:`
_KINDS_BY_SUFFIX: dict[str, FileKind] = {
    ".pdf": "pdf",
    ".csv": "csv",
    ".txt": "text",
    ".md": "text",
    ".xlsx": "excel",
    ".xlsm": "excel",
    ".docx": "word",
    ".pptx": "powerpoint",
    ".png": "image",
    ".jpg": "image",
    ".jpeg": "image",
    ".gif": "image",
    ".webp": "image",
}
# `A1:E100`, `B2`, or whole columns/rows such as `A:C`
CELL_RANGE = re.compile(r"^(?:[A-Za-z]{1,3}\d*|\d+)(?::(?:[A-Za-z]{1,3}\d*|\d+))?$")


class FileInput(Strict):
    """A file sent to the model with the input: a local `path` or a `url` to download.

    Images go as images, PDFs as documents (or, with `pages`, as the text of those pages),
    text and CSV files as text, Word, PowerPoint and Excel files as their text (the
    `office` extra converts them)."""

    path: NonEmpty | None = Field(
        default=None, description="File relative to the agent's directory."
    )
    url: NonEmpty | None = Field(
        default=None,
        description="http(s) URL to download the file from (through the network settings); "
        "downloads are cached (execution.cache_enabled, cache_dir).",
    )
    type: FileKind | None = Field(
        default=None, description="Media kind; default: guessed from the file name."
    )
    description: str | None = Field(
        default=None, description="Said to the model before the file, e.g. what it shows."
    )
    pages: list[Annotated[int, Field(gt=0)]] | None = Field(
        default=None, description="PDF pages or PowerPoint slides to send (from 1)."
    )
    sheet: NonEmpty | None = Field(
        default=None, description="Excel: the sheet to send; default: every sheet."
    )
    range: NonEmpty | None = Field(
        default=None, description="Excel: the cells to send, e.g. `A1:E100`."
    )
    cache: bool | None = Field(
        default=None,
        description="For a `url`: keep the download (default: execution.cache_enabled).",
    )

    @model_validator(mode="after")
    def _one_source(self) -> FileInput:
        if (self.path is None) == (self.url is None):
            raise ValueError("give either `path` or `url`")
        if self.url is not None and not self.url.lower().startswith(("http://", "https://")):
            raise ValueError(f"`url` must start with http:// or https://, not `{self.url}`")
        if self.cache is not None and self.url is None:
            raise ValueError("`cache` applies to a `url` (a local `path` is read as it is)")
        kind = self.kind
        if self.pages is not None and kind not in ("pdf", "powerpoint"):
            raise ValueError(
                f"`pages` applies to PDF and PowerPoint files, not {kind} files; remove it"
            )
        for option in ("sheet", "range"):
            if getattr(self, option) is not None and kind != "excel":
                raise ValueError(f"`{option}` applies to Excel files, not {kind} files")
        if self.range is not None and not CELL_RANGE.match(self.range):
            raise ValueError(f"`range` `{self.range}` is not a cell range such as `A1:E100`")
        return self

    @property
    def source(self) -> str:
        return self.path if self.path is not None else (self.url or "")

    @property
    def kind(self) -> FileKind:
        """`type`, else guessed from the name (the URL's path for a URL)."""
        if self.type is not None:
            return self.type
        name = self.source.split("?", 1)[0].split("#", 1)[0]
        suffix = "." + name.rsplit(".", 1)[-1].lower() if "." in name.rsplit("/", 1)[-1] else ""
        return _KINDS_BY_SUFFIX.get(suffix, "file")


class Turn(Strict):
    """One exchange of a multi-turn case. A turn with `evaluations`, a `ground_truth` or a
    `turn_config` is scored on its own: its input, its answer, its tool calls."""

    input: NonEmpty
    ground_truth: NonEmpty | None = None
    expected_tools: ExpectedTools | None = None
    files: list[FileInput] | None = Field(default=None, description="Sent with this turn only.")
    retrieval_context: list[str] | None = Field(
        default=None,
        description="Context for this turn's RAG metrics; default: its tools' results.",
    )
    evaluations: list[Metric] | None = Field(
        default=None, description="This turn's metrics; default: the case's, else the agent's."
    )
    turn_config: dict[str, Any] | None = Field(
        default=None,
        description="Free-form settings handed to code graders (`grader:`) for this turn.",
    )


DEFAULT_MAX_TURNS = 6


class MemoryMatch(Strict):
    """A memory matched by a pattern (`re.search`) instead of by its words."""

    regex: NonEmpty

    @field_validator("regex")
    @classmethod
    def _compiles(cls, regex: str) -> str:
        try:
            re.compile(regex)
        except re.error as exc:
            raise ValueError(f"invalid regex: {exc}") from None
        return regex


MemoryPattern = NonEmpty | MemoryMatch


class SeededMemory(Strict):
    """A memory a case starts with, under an id of its own (which an offline run's pinned
    `forget` arguments can name)."""

    id: Annotated[str, Field(pattern=r"^[A-Za-z0-9_-]{1,64}$")]
    text: NonEmpty


class ExpectedMemories(Strict):
    """What the user's long-term memories hold after the case. A text matches a memory
    that contains it (case and spacing aside); `{regex: ...}` one the pattern finds."""

    contains: list[MemoryPattern] = Field(
        default_factory=list, description="Each must match at least one memory."
    )
    not_contains: list[MemoryPattern] = Field(
        default_factory=list, description="None may match any memory."
    )

    @model_validator(mode="after")
    def _something(self) -> ExpectedMemories:
        if not self.contains and not self.not_contains:
            raise ValueError("give `contains`, `not_contains` or both")
        return self


class SimulatedSession(Strict):
    """One conversation of a simulated user who comes back: a new session of the same
    user, which starts without the earlier ones' history (only long-term memory stays)."""

    first_message: NonEmpty | None = Field(
        default=None, description="The user's opening message of this session."
    )
    plan: list[NonEmpty] | None = Field(
        default=None, description="What the user says in this session, in order."
    )
    expected_tools: ExpectedTools | None = Field(
        default=None,
        description="Tools the agent must call in this session (an offline agent calls "
        "them in the session's first turn).",
    )


class SimulatedUser(Strict):
    """A model that plays the user: a persona with a goal, talking to the agent until the
    goal is met, it gives up, or `max_turns` answers have been given."""

    persona: NonEmpty = Field(description="Who the user is and how they talk.")
    goal: NonEmpty = Field(description="What the user wants from the conversation.")
    first_message: NonEmpty | None = Field(
        default=None, description="The user's opening message; default: the user model's."
    )
    max_turns: Annotated[int, Field(ge=1)] = Field(
        default=DEFAULT_MAX_TURNS, description="At most this many answers from the agent."
    )
    plan: list[NonEmpty] | None = Field(
        default=None,
        description="What the user says, in order, after `first_message` (if any): the user "
        "model follows it in its own words; the offline `test` model says it verbatim and "
        "stops with goal_met after the last line.",
    )
    sessions: Annotated[list[SimulatedSession], Field(min_length=2)] | None = Field(
        default=None,
        description="The user talks to the agent in several sessions, one after another, "
        "each new (no history of the earlier ones), each with its own `first_message` and "
        "`plan`; `max_turns` counts per session.",
    )

    @model_validator(mode="after")
    def _plan_fits(self) -> SimulatedUser:
        if self.sessions is not None and (self.plan or self.first_message):
            raise ValueError(
                "with `sessions`, give each session its own `first_message` and `plan` "
                "(not the user's)"
            )
        for number, part in enumerate(self.parts(), start=1):
            lines = len(part.plan or []) + (part.first_message is not None)
            if lines > self.max_turns:
                where = f"session {number} has" if self.sessions else "the user has"
                raise ValueError(
                    f"{where} {lines} messages to say (first_message and plan) but "
                    f"`max_turns` is {self.max_turns}: raise `max_turns` or shorten the plan"
                )
        return self

    def parts(self) -> list[SimulatedSession]:
        """The sessions the user talks in (one, without `sessions`)."""
        if self.sessions is not None:
            return list(self.sessions)
        return [SimulatedSession(first_message=self.first_message, plan=self.plan)]


class TestCase(Strict):
    """One scenario: an input (or several turns), what a good answer is, which tools."""

    __test__ = False  # not a pytest class

    name: NonEmpty | None = None
    input: NonEmpty | None = None
    turns: Annotated[list[Turn], Field(min_length=1)] | None = None
    simulate: SimulatedUser | None = Field(
        default=None,
        description="A simulated user talks to the agent instead of `input` or `turns`.",
    )
    ground_truth: NonEmpty | None = None
    expected_tools: ExpectedTools | None = Field(
        default=None, description="Tools the agent must call: names, or name/args/count."
    )
    tool_order: ToolOrder = Field(
        default="any",
        description="any: each expected tool called; in_order: in this order (others may "
        "come between); exact: exactly these calls, in this order.",
    )
    files: list[FileInput] | None = None
    retrieval_context: list[str] | None = Field(
        default=None, description="Context for RAG metrics; default: the tools' results."
    )
    evaluations: list[Metric] | None = Field(
        default=None, description="Replaces the agent's metrics for this case."
    )
    approve: list[NonEmpty] | None = Field(
        default=None,
        description="Tools whose calls waiting for approval (`approval:`) this case approves.",
    )
    deny: list[NonEmpty] | None = Field(
        default=None,
        description="Tools whose calls waiting for approval this case denies (the model is "
        "told); a call of a tool in neither list makes the case an ERROR.",
    )
    workspace: CaseWorkspace | None = Field(
        default=None,
        description="Files placed in the case's own copy of the workspace before it runs "
        "(agents with acting tools).",
    )
    expected_files: ExpectedFiles | None = Field(
        default=None,
        description="Files the workspace must hold afterwards: path -> {equals | contains | "
        "exists: false}.",
    )
    memories: list[NonEmpty | SeededMemory] | None = Field(
        default=None,
        description="Long-term memories the case's user has before it starts (agents with "
        "`memory.long_term`): texts, or `{id, text}`.",
    )
    expected_memories: ExpectedMemories | None = Field(
        default=None,
        description="What the user's long-term memories must (`contains`) and must not "
        "(`not_contains`) hold after the case: texts, or `{regex: ...}`.",
    )

    @field_validator("expected_files")
    @classmethod
    def _files_inside(cls, expected: ExpectedFiles | None) -> ExpectedFiles | None:
        return check_expected_paths(expected)

    @model_validator(mode="after")
    def _approve_or_deny(self) -> TestCase:
        both = sorted(set(self.approve or []) & set(self.deny or []))
        if both:
            raise ValueError(f"{', '.join(both)}: in both `approve` and `deny`; give one")
        return self

    @model_validator(mode="after")
    def _input_or_turns(self) -> TestCase:
        given = [k for k in ("input", "turns", "simulate") if getattr(self, k) is not None]
        if len(given) != 1:
            if not given:
                raise ValueError("give either `input` or `turns`, or a simulated user (`simulate`)")
            listed = " and ".join(f"`{k}`" for k in given)
            raise ValueError(f"give one of `input`, `turns` or `simulate`, not {listed}")
        if self.simulate is not None and self.files is not None:
            raise ValueError(
                "a simulated user sends no files: remove `files:` or write the case as `turns`"
            )
        if self.turns is not None and self.files is not None:
            raise ValueError(
                "a case with `turns` sends files with a turn: move `files:` under the turn "
                "that should carry them"
            )
        return self


def expected_name(entry: str | ExpectedTool) -> str:
    return entry if isinstance(entry, str) else entry.name
