"""The best candidate written beside the original, which is never changed: agent.yaml's
copy `agent.optimized.yaml` (comments and layout kept), and new instructions in
`<file>.optimized.md` when they live in a file or the agent is an image (whose
`config.optimized.yaml` then points at them)."""

from __future__ import annotations

import difflib
import io
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from holodeck.atomic_write import write_atomically
from holodeck.errors import ConfigurationError
from holodeck.spec.models.agent_spec import AgentSpec
from holodeck.spec.models.optimizer import parse_setting
from holodeck.testing.optimizer.run import SearchOutcome

FENCE = "---"


@dataclass
class Written:
    path: Path
    diff: str  # unified diff from the original file (or from the original instructions)


def write_result(spec: AgentSpec, result: SearchOutcome) -> list[Written]:
    """Write the best candidate's changes; nothing when the original stayed the best."""
    if not result.improved:
        return []
    best, original = result.best, result.baseline
    changed = {p: v for p, v in best.values.items() if v != original.values.get(p)}
    new_text = best.instructions if best.instructions != original.instructions else None
    if spec.format == "image":
        return _image(spec, changed, new_text)
    return _agent_yaml(spec, changed, new_text)


def _agent_yaml(spec: AgentSpec, changed: dict[str, Any], new_text: str | None) -> list[Written]:
    yaml, source = _yaml(), spec.source.read_text(encoding="utf-8")
    data = yaml.load(source)
    written = []
    for path, value in changed.items():
        tool, name = parse_setting(path)
        if tool is None:
            _mapping(data, "model", spec)[name] = value
        else:
            entry = next(t for t in data.get("tools") or [] if t.get("name") == tool)
            entry[name] = value
    if new_text is not None:
        instructions = _mapping(data, "instructions", spec)
        if spec.instructions_file is not None:
            target = _optimized(spec.instructions_file)
            written.append(_instructions_file(spec.instructions_file, target, new_text))
            instructions["file"] = _relative(target, spec.root)
        else:
            from ruamel.yaml.scalarstring import LiteralScalarString

            instructions["inline"] = LiteralScalarString(new_text.rstrip("\n") + "\n")
    target = spec.source.with_name(f"{spec.source.stem}.optimized{spec.source.suffix}")
    written.insert(0, _write(target, _dump(yaml, data), source, spec.source.name))
    return written


def _image(spec: AgentSpec, changed: dict[str, Any], new_text: str | None) -> list[Written]:
    yaml, source = _yaml(), spec.source.read_text(encoding="utf-8")
    data = yaml.load(source)
    written = []
    llm = data.get("llm") if isinstance(data.get("llm"), dict) else None
    for path, value in changed.items():
        _, name = parse_setting(path)
        if llm is None:
            raise ConfigurationError(f"{spec.source}: no `llm` block to write {name} into")
        if name == "max_tokens" and "max_completion_tokens" in llm:
            name = "max_completion_tokens"
        llm[name] = value
    if new_text is not None:
        origin = spec.instructions_file or spec.root / "AGENTS.md"
        target = _optimized(origin)
        if spec.instructions_file is not None:
            written.append(_instructions_file(origin, target, new_text))
        else:  # inline in config.yaml: the new text goes to a file of its own
            diff = _diff(spec.instructions or "", new_text, "instructions", target.name)
            write_atomically(target, new_text.encode())
            written.append(Written(target, diff))
        data.pop("prompt", None)
        data["instructions"] = _relative(target, spec.root)
    target = spec.source.with_name("config.optimized.yaml")
    written.insert(0, _write(target, _dump(yaml, data), source, spec.source.name))
    return written


def _instructions_file(origin: Path, target: Path, text: str) -> Written:
    """`text` in `target`, under the front matter of `origin` (its version and tags)."""
    before = origin.read_text(encoding="utf-8")
    front = ""
    lines = before.splitlines(keepends=True)
    if lines and lines[0].strip() == FENCE:
        end = next((i for i in range(1, len(lines)) if lines[i].strip() == FENCE), None)
        if end is not None:
            front = "".join(lines[: end + 1])
    return _write(target, front + text.rstrip("\n") + "\n", before, origin.name)


def _write(target: Path, text: str, before: str, name: str) -> Written:
    write_atomically(target, text.encode())
    return Written(target, _diff(before, text, name, target.name))


def _diff(before: str, after: str, old: str, new: str) -> str:
    return "".join(
        difflib.unified_diff(
            before.splitlines(keepends=True), after.splitlines(keepends=True), old, new
        )
    )


def _yaml() -> Any:
    from ruamel.yaml import YAML

    yaml = YAML(typ="rt", pure=True)
    yaml.preserve_quotes = True
    yaml.width = 4096  # long lines stay as they were written
    return yaml


def _dump(yaml: Any, data: Any) -> str:
    out = io.StringIO()
    yaml.dump(data, out)
    return out.getvalue()


def _mapping(data: Any, key: str, spec: AgentSpec) -> Any:
    found = data.get(key)
    if not hasattr(found, "get"):
        raise ConfigurationError(f"{spec.source}: `{key}` is not a mapping to write into")
    return found


def _optimized(path: Path) -> Path:
    return path.with_name(f"{path.stem}.optimized{path.suffix or '.md'}")


def _relative(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return str(path)
