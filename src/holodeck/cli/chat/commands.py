"""Chat's slash commands (/help, /tools, /usage, /reset, /attach, /save, /save-case,
/call) and what they and the banner say about the agent: its model, tools, skills,
sub-agents, data and memory."""

from __future__ import annotations

import json
from pathlib import Path

from holodeck.cli.chat.conversation import Conversation, SessionFileError
from holodeck.cli.chat.save_case import save_case
from holodeck.cli.chat.view import ChatView
from holodeck.errors import InputError
from holodeck.runtime import Agent, InputRefused
from holodeck.spec.models.agent_spec import AgentSpec
from holodeck.spec.models.tools import (
    A2ATool,
    AgentTool,
    FunctionTool,
    HierarchicalDocumentTool,
    McpTool,
    PromptTool,
    TypeScriptTool,
    VectorstoreTool,
)
from holodeck.tools.errors import ToolLoadError
from holodeck.tools.python_modules import load_module

HELP = """\
Commands:
  /help          this help
  /tools         the agent's tools, skills and sub-agents
  /usage         tokens (and cost, when it can be priced) so far
  /reset         forget the conversation and start again
  /attach FILE   send an image or a document with the next question
                 (for agents that declare image or file input)
  /save FILE     write the transcript so far to FILE as markdown
  /save-case NAME [FILE]
                 keep the conversation so far as test case NAME, in FILE
                 (default: the agent's own cases, which `holodeck test` runs)
  /call TOOL [{"arg": "value"}]
                 the offline `test` model calls TOOL in its next answer, with these
                 arguments (others filled from your question); it calls no tool unless
                 asked. A real model chooses its own tools.
  /exit, /quit   leave (so do `exit`, `quit` and Ctrl+D)
Keys:
  Enter          send
  Esc then Enter add a line (Alt+Enter does the same in most terminals)
  Up, Down       earlier questions of this session
  Ctrl+C         cancel the answer being written; at the prompt, clear the line,
                 or on an empty line press it twice to leave"""


def model_label(agent: Agent) -> str:
    built = agent.model
    label = f"{built.provider}/{built.name}" if built.name else built.provider
    notes = ["offline"] if built.provider == "test" else []
    own = agent.spec.model
    if agent.options.model is not None and own is not None:
        notes.append(f"instead of {own.provider}/{own.name}" if own.name else "from --model")
    cassette = agent.options.cassette
    if cassette is not None:
        notes.append(f"{'recording to' if cassette.recording else 'replaying'} {cassette.path}")
    return f"{label} ({', '.join(notes)})" if notes else label


def tool_rows(spec: AgentSpec) -> list[tuple[str, str, str]]:
    """(name, kind, description) of each tool the model can call."""
    rows: list[tuple[str, str, str]] = []
    for tool in spec.tools:
        if isinstance(tool, AgentTool):
            continue  # listed with the sub-agents below
        if isinstance(tool, McpTool):
            where = tool.url or tool.command or tool.server or ""
            rows.append((f"{tool.name}_*", "mcp", tool.description or f"tools of {where}"))
        elif isinstance(tool, FunctionTool | TypeScriptTool):
            rows.append((tool.name, tool.type, tool.description or _docstring(spec, tool)))
        elif isinstance(tool, PromptTool | VectorstoreTool | HierarchicalDocumentTool):
            rows.append((tool.name, tool.type, tool.description))
        elif isinstance(tool, A2ATool):
            rows.append((tool.name, "a2a", tool.description or f"the A2A agent at {tool.url}"))
    for name, sub in spec.subagents.items():
        described = next(
            (t.description for t in spec.tools if isinstance(t, AgentTool) and t.name == name),
            None,
        )
        rows.append((name, "sub-agent", described or sub.description or ""))
    if spec.skills:
        names = ", ".join(s.name for s in spec.skills)
        rows.append(("load_skill", "skills", f"loads the instructions of: {names}"))
        if any(s.resources for s in spec.skills):
            rows.append(("read_skill_file", "skills", "reads a file of a skill"))
    for builtin in spec.builtins:
        rows.append((builtin.name, "built-in", ""))
    return rows


def _docstring(spec: AgentSpec, tool: FunctionTool | TypeScriptTool) -> str:
    if not isinstance(tool, FunctionTool):
        return ""

    try:  # already imported when the agent was built
        function = getattr(load_module(spec.root / tool.file), tool.function, None)
    except ToolLoadError:
        return ""
    doc = (getattr(function, "__doc__", None) or "").strip()
    return doc.splitlines()[0] if doc else ""


def banner_rows(conversation: Conversation, resumed: int) -> list[tuple[str, str]]:
    spec = conversation.spec
    kinds = ("sub-agent", "skills")
    tools = [name for name, kind, _ in tool_rows(spec) if kind not in kinds]
    searches = VectorstoreTool | HierarchicalDocumentTool
    sources = [f"{t.name}: {t.source}" for t in spec.tools if isinstance(t, searches)]
    if not spec.interaction.conversational:
        memory = "off (interaction.conversational is false): each question stands alone"
    else:
        memory = f"last {conversation.session.max_messages} messages"
        compaction = spec.memory.compaction
        if compaction is not None and compaction.enabled:  # older turns summarised instead
            memory = f"all, older turns summarised near the context window ({compaction.at:.0%})"
        if conversation.session_file is None:
            memory += ", not saved (--session FILE keeps them)"
        elif resumed:
            memory += f", resumed {resumed} from {conversation.session_file}"
        else:
            memory += f", saved to {conversation.session_file}"
    about = [("about", spec.description)] if spec.description else []
    if spec.author:
        about.append(("author", spec.author))
    return [
        *about,
        ("model", model_label(conversation.agent)),
        ("tools", ", ".join(tools) or "none"),
        ("skills", ", ".join(s.name for s in spec.skills) or "none"),
        ("sub-agents", ", ".join(spec.subagents) or "none"),
        *_handoff_rows(conversation),
        ("data", ", ".join(sources) or "none"),
        ("memory", memory),
        *_network_row(conversation),
    ]


def _handoff_rows(conversation: Conversation) -> list[tuple[str, str]]:
    """The agents it may hand the conversation to, and who answers now (a resumed
    session may have been handed over)."""
    spec = conversation.spec
    if not spec.handoffs:
        return []
    return [
        ("handoffs", ", ".join(h.name for h in spec.handoffs)),
        ("answering", conversation.session.answering_agent),
    ]


def _network_row(conversation: Conversation) -> list[tuple[str, str]]:
    """Said when --allow-loopback opened this machine to what the model steers."""
    if not conversation.agent.hosting.allow_loopback:
        return []
    return [("network", "loopback allowed (--allow-loopback): web_fetch may reach this machine")]


def run_command(line: str, conversation: Conversation, view: ChatView) -> bool:
    """Do a slash command; True when the session should end."""
    name, _, argument = line.strip().partition(" ")
    name, argument = name.lower(), argument.strip()
    if name in ("/exit", "/quit"):
        return True
    if name == "/help":
        view.notice(HELP)
    elif name == "/tools":
        rows = tool_rows(conversation.spec)
        if not rows:
            view.notice("This agent has no tools.")
        width = max((len(n) for n, _, _ in rows), default=0)
        kind_width = max((len(k) for _, k, _ in rows), default=0)
        for tool, kind, description in rows:
            view.notice(f"  {tool.ljust(width)}  {kind.ljust(kind_width)}  {description}".rstrip())
    elif name == "/usage":
        for text in conversation.session.spend.report():
            view.notice(text)
    elif name == "/reset":
        try:
            conversation.reset()
        except SessionFileError as exc:
            view.error(str(exc))
        else:
            view.notice("The conversation is forgotten; the next question starts a new one.")
    elif name == "/attach":
        _attach(argument, conversation, view)
    elif name == "/call":
        _call(argument, conversation, view)
    elif name == "/save-case":
        _save_case(argument, conversation, view)
    elif name == "/save":
        if not argument:
            view.error("/save needs a file name, e.g. /save chat.md")
            return False
        path = Path(argument).expanduser()
        try:
            conversation.save_transcript(path)
        except OSError as exc:
            view.error(f"{path}: cannot write the transcript: {exc.strerror or exc}")
        else:
            view.notice(f"Saved the transcript to {path}")
    else:
        view.error(f"unknown command {name}; /help lists the commands")
    return False


def _save_case(argument: str, conversation: Conversation, view: ChatView) -> None:
    name, _, file = argument.partition(" ")
    if not name:
        view.error(
            "/save-case needs a name, e.g. /save-case refund-flow (then a file, if not "
            "the agent's own cases)"
        )
        return
    target = Path(file.strip()).expanduser() if file.strip() else None
    try:
        written = save_case(conversation.spec, conversation.transcript, name, target)
    except InputError as exc:
        view.error(f"{exc.message}{f' ({exc.hint})' if exc.hint else ''}")
    except OSError as exc:
        view.error(f"{target}: cannot write the case: {exc.strerror or exc}")
    else:
        view.notice(f"Saved the conversation as test case {name!r} in {written}")


def _attach(argument: str, conversation: Conversation, view: ChatView) -> None:
    if not argument:
        view.error("/attach needs a file, e.g. /attach photo.png")
        return
    path = Path(argument).expanduser()
    try:
        attachment = conversation.attach(path)
    except InputRefused as exc:
        view.error(f"{exc}; add it to the agent's input modalities to send such files")
    except OSError as exc:
        view.error(f"{path}: cannot read the file: {exc.strerror or exc}")
    else:
        count = len(conversation.attached)
        view.notice(
            f"Attached {path.name} ({attachment.media_type}); "
            f"{'it goes' if count == 1 else f'{count} files go'} with your next question."
        )


def _call(argument: str, conversation: Conversation, view: ChatView) -> None:
    tool, _, given = argument.partition(" ")
    example = '{"city": "Oslo"}'
    if not tool:
        view.error(f"/call needs a tool, e.g. /call get_weather or /call get_weather {example}")
        return
    if conversation.agent.model.provider != "test":
        view.error(
            f"/call steers only the offline `test` model (chat --model test); "
            f"{model_label(conversation.agent)} chooses its own tools: ask for {tool} in words"
        )
        return
    offered = [name for name, _, _ in tool_rows(conversation.spec)]
    if not any(tool == n or (n.endswith("*") and tool.startswith(n[:-1])) for n in offered):
        view.error(f"/call {tool}: the agent has no tool {tool}; /tools lists its tools")
        return
    try:
        values = json.loads(given) if given.strip() else {}
    except ValueError as exc:
        view.error(f"/call {tool}: the arguments are not JSON ({exc}); e.g. {example}")
        return
    if not isinstance(values, dict):
        view.error(f"/call {tool}: give the arguments as a JSON object, e.g. {example}")
        return
    conversation.calls.append((tool, values))
    with_values = f" with {given.strip()}" if values else ""
    view.notice(f"The next answer calls {tool}{with_values}.")
