"""Every field a user can write is read by the code that acts on it.

The schema is what a person writes: agent.yaml (`AgentFile`), an image's config.yaml
(`ImageConfig`), `tools/mcp/*.yaml` (`McpFile`), SKILL.md frontmatter, an image's
`tests/*.yaml` (`TestFile`) and the global or project config.yaml (`Settings`). The test
walks those root models recursively (nested models, list and dict items, union members)
and, for every field, looks for code that reads it outside `src/holodeck/spec/`: in the
runtime, llm, tools, testing, cli or config packages. Reading a field inside `spec/` does
not count: the loaders only copy raw fields into the `AgentSpec`, which is itself a spec
object; a field matters when something downstream of the spec reads it.

A field whose value reaches the `AgentSpec` under another name (an image's
`llm.max_completion_tokens` becomes `model.max_tokens`) is listed in `BECOMES`; it counts as
read when a loader in `spec/` reads it and code outside `spec/` reads what it becomes.

A field nothing reads yet must be listed in `NOT_YET_USED` with the issue or reason that
will use it, so it cannot be accepted and then forgotten: a new field, or an entry here
whose field is now read (or gone), fails the test.

Limitation: the check is static and matches names only (`obj.field`, `obj["field"]`,
`getattr(obj, "field")`), so a field shares credit with any attribute of the same name
(`name`, `type`, `timeout` are read in many places). It proves that a field nobody reads
is caught, not that every read field changes behaviour; the feature tests do that. Unused
fields the check would pass only for such a namesake (found by reading the code) are in
`NOT_YET_USED` too, and `SAME_NAME_READ_ELSEWHERE` says which unrelated reads those are.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Annotated, Any, Literal, get_args, get_origin

from pydantic import BaseModel

from holodeck.config.settings import Settings
from holodeck.spec.agent_yaml.agent_file import AgentFile
from holodeck.spec.image.cases import TestFile
from holodeck.spec.image.files import ImageConfig, McpFile, SkillFrontmatter

SOURCE = Path(__file__).resolve().parents[2] / "src" / "holodeck"
SPEC = SOURCE / "spec"
NOT_SOURCE = (SOURCE / "templates", SOURCE / "tools" / "node" / "node_modules")

ROOTS: dict[str, type[BaseModel]] = {
    "agent.yaml": AgentFile,
    "image config.yaml": ImageConfig,
    "image tools/mcp/*.yaml": McpFile,
    "SKILL.md frontmatter": SkillFrontmatter,
    "image tests/*.yaml": TestFile,
    "global/project config.yaml": Settings,
}

# Raw field -> the AgentSpec attribute(s) the loader turns it into.
BECOMES: dict[str, tuple[str, ...]] = {
    "ImageConfig.llm": ("model",),
    "LlmConfig.model": ("provider", "name"),
    "LlmConfig.max_completion_tokens": ("max_tokens",),
    "LlmConfig.fallback_models": ("fallbacks",),
    "ImageConfig.prompt": ("instructions",),
    "Interaction.modalities": ("input_modalities", "output_modalities"),
    "Modalities.input": ("input_modalities",),
    "Modalities.output": ("output_modalities",),
    "ToolsBlock.agents": ("subagents",),
    "Instructions.inline": ("instructions",),
    "Instructions.file": ("instructions", "instructions_file"),
    "AgentTool.path": ("subagents",),
    "AgentFile.test_cases_file": ("test_cases",),
    "CodeBuiltin.session": ("code_session",),
}

NOT_YET_USED: dict[str, str] = {
    "ImageConfig.spec_version": "a format version: the loader accepts 1 and rejects any other",
    # read in one place for both uses: validation (a case may expect the tools they turn
    # on) and the harness, which calls it (runtime/harness/_sdk_options.py builtin_tools)
    "ClaudeSettings.file_system": "read by ClaudeSettings.builtin_tools, which the harness calls",
    "ClaudeSettings.web_search": "read by ClaudeSettings.builtin_tools, which the harness calls",
    "FileSystemSettings.edit": "read by ClaudeSettings.builtin_tools, which the harness calls",
    "HierarchicalDocumentTool.extract_cross_references": "accepted from the shipped HoloDeck, "
    "which never extracted cross-references: the loader warns that it has no effect "
    "(tests/search/test_retrieval_options.py)",
}

# Unused fields whose name the check finds read only because an unrelated attribute shares
# it: where those reads are.
SAME_NAME_READ_ELSEWHERE: dict[str, str] = {}


# --- the checker --------------------------------------------------------------------------


def python_files(root: Path, *, skip: Iterable[Path] = ()) -> list[Path]:
    skipped = tuple(skip)
    return [
        path
        for path in sorted(root.rglob("*.py"))
        if not any(path.is_relative_to(other) for other in skipped)
    ]


def read_names(files: Iterable[Path]) -> set[str]:
    """Names read as `x.name`, `x["name"]` or `getattr(x, "name")` in `files`."""
    names: set[str] = set()
    for path in files:
        for node in ast.walk(ast.parse(path.read_text("utf-8"), str(path))):
            if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
                names.add(node.attr)
            elif (
                isinstance(node, ast.Subscript)
                and isinstance(node.ctx, ast.Load)
                and isinstance(node.slice, ast.Constant)
                and isinstance(node.slice.value, str)
            ):
                names.add(node.slice.value)
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in ("getattr", "hasattr")
                and len(node.args) >= 2
                and isinstance(node.args[1], ast.Constant)
                and isinstance(node.args[1].value, str)
            ):
                names.add(node.args[1].value)
    return names


def schema_fields(roots: Mapping[str, type[BaseModel]]) -> dict[str, str]:
    """`Model.field` -> where a user writes it (first path found), for every field of
    every model reachable from `roots`."""
    found: dict[str, str] = {}
    seen: set[type[BaseModel]] = set()

    def visit(model: type[BaseModel], document: str, where: str) -> None:
        if model in seen:
            return
        seen.add(model)
        for name, info in model.model_fields.items():
            path = f"{where}.{name}" if where else name
            found.setdefault(f"{model.__name__}.{name}", f"{document}: {path}")
            for nested in _models_in(info.annotation):
                visit(nested, document, path)

    for document, root in roots.items():
        visit(root, document, "")
    return found


def _models_in(annotation: Any) -> Iterator[type[BaseModel]]:
    """Models inside an annotation: itself, union members, list/dict/tuple items."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        yield annotation
        return
    origin = get_origin(annotation)
    if origin is Literal:
        return
    if origin is Annotated:
        yield from _models_in(get_args(annotation)[0])
        return
    for arg in get_args(annotation):  # union members, list/dict/tuple items
        yield from _models_in(arg)


def unread_fields(
    fields: Mapping[str, str],
    read_outside: set[str],
    read_inside: set[str],
    becomes: Mapping[str, tuple[str, ...]],
) -> set[str]:
    """The fields (`Model.field`) that no code outside spec/ reads."""
    unread = set()
    for key in fields:
        name = key.split(".", 1)[1]
        if key in becomes:
            used = name in read_inside and any(t in read_outside for t in becomes[key])
        else:
            used = name in read_outside
        if not used:
            unread.add(key)
    return unread


# --- the tests ----------------------------------------------------------------------------


def test_every_schema_field_is_read_outside_spec() -> None:
    fields = schema_fields(ROOTS)
    assert {"AgentFile.name", "McpTool.startup_timeout", "Modalities.input"} <= set(fields)
    unread = unread_fields(
        fields,
        read_names(python_files(SOURCE, skip=(SPEC, *NOT_SOURCE))),
        read_names(python_files(SPEC)),
        BECOMES,
    )
    forgotten = sorted(unread - set(NOT_YET_USED))
    assert not forgotten, "fields nothing reads (use them, or list them with a reason):\n" + (
        "\n".join(f"  {key}  [{fields[key]}]" for key in forgotten)
    )
    listed = set(NOT_YET_USED) | set(SAME_NAME_READ_ELSEWHERE) | set(BECOMES)
    assert listed <= set(fields), f"listed fields that do not exist: {sorted(listed - set(fields))}"
    now_read = sorted(set(NOT_YET_USED) - unread - set(SAME_NAME_READ_ELSEWHERE))
    assert not now_read, f"listed as not yet used, but now read: {now_read}"
    assert set(SAME_NAME_READ_ELSEWHERE) <= set(NOT_YET_USED)
    assert not set(SAME_NAME_READ_ELSEWHERE) & unread, "no longer read anywhere: drop the note"


class _Port(BaseModel):
    number: int


class _Service(BaseModel):
    port: _Port | None = None
    replicas: list[_Port] = []
    forgotten_knob: bool = False


def test_the_check_catches_a_field_nothing_reads(tmp_path: Path) -> None:
    consumer = tmp_path / "serve.py"
    consumer.write_text(
        "def serve(service):\n    return service.port.number, getattr(service, 'replicas')\n",
        "utf-8",
    )
    fields = schema_fields({"service.yaml": _Service})
    assert fields == {
        "_Service.port": "service.yaml: port",
        "_Service.replicas": "service.yaml: replicas",
        "_Service.forgotten_knob": "service.yaml: forgotten_knob",
        "_Port.number": "service.yaml: port.number",
    }
    reads = read_names(python_files(tmp_path))
    assert unread_fields(fields, reads, set(), {}) == {"_Service.forgotten_knob"}

    # a loader in spec/ that reads the field counts only when what it becomes is read
    becomes = {"_Service.forgotten_knob": ("knob",)}
    assert unread_fields(fields, reads, {"forgotten_knob"}, becomes) == {"_Service.forgotten_knob"}
    consumer.write_text(consumer.read_text("utf-8") + "knob = lambda spec: spec.knob\n")
    reads = read_names(python_files(tmp_path))
    assert unread_fields(fields, reads, {"forgotten_knob"}, becomes) == set()
