"""Random and mutated definitions never produce a traceback, only diagnostics."""

from __future__ import annotations

import io
import shutil
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from holodeck.config.loader import load_agent
from holodeck.spec import SpecError
from holodeck.spec.yaml.source import parse_yaml

FUZZ = settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

VALID_AGENT: dict[str, Any] = {
    "name": "demo",
    "model": {"provider": "openai", "name": "gpt-4o", "temperature": 0.3},
    "instructions": {"inline": "Be helpful."},
    "tools": [
        {"type": "function", "name": "lookup", "file": "tools.py", "function": "lookup"},
        {"type": "mcp", "name": "fs", "server": "@modelcontextprotocol/server-filesystem"},
        {"type": "prompt", "name": "p", "description": "d", "template": "Hi {{ x }}"},
    ],
    "evaluations": {"metrics": [{"metric": "bleu", "threshold": 0.3}]},
    "test_cases": [{"name": "t", "input": "hi", "expected_tools": ["lookup"]}],
}
VALID_IMAGE: dict[str, Any] = {
    "spec_version": 1,
    "llm": {"model": "openai/gpt-4o", "reasoning_effort": "low"},
    "interaction": {"conversational": True, "modalities": {"input": ["text"]}},
    "tools": {"agents": [], "builtins": ["web_fetch"], "timeout": 5},
    "params": {"k": 1},
}

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**6), max_value=10**6),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=20),
    st.sampled_from(["${X}", "${UNSET_VAR}", "$${Y}", "${:-}", "../..", "/etc/passwd", "a" * 70]),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=12), inner, max_size=4)
    ),
    max_leaves=12,
)


def dump(data: Any) -> str:
    from ruamel.yaml import YAML

    out = io.StringIO()
    YAML(typ="safe", pure=True).dump(data, out)
    return out.getvalue()


def load_quietly(path: Path) -> None:
    try:
        load_agent(path, environ={"X": "1"})
    except SpecError as exc:
        assert exc.diagnostics, "a SpecError always carries its diagnostics"
        for diagnostic in exc.diagnostics:
            assert diagnostic.render()


@st.composite
def mutated(draw: st.DrawFn, base: dict[str, Any]) -> dict[str, Any]:
    """`base` with a few of its keys deleted, renamed or given random values."""
    import copy

    data = copy.deepcopy(base)
    for _ in range(draw(st.integers(1, 4))):
        node: Any = data
        while isinstance(node, dict | list) and node and draw(st.booleans()):
            key = draw(st.sampled_from(list(node) if isinstance(node, dict) else range(len(node))))
            if not isinstance(node[key], dict | list):
                break
            node = node[key]
        if isinstance(node, dict) and node:
            key = draw(st.sampled_from(list(node)))
            action = draw(st.sampled_from(["delete", "rename", "replace"]))
            if action == "delete":
                del node[key]
            elif action == "rename":
                node[key + draw(st.text(min_size=1, max_size=2))] = node.pop(key)
            else:
                node[key] = draw(values)
        elif isinstance(node, list) and node:
            node[draw(st.integers(0, len(node) - 1))] = draw(values)
    return data


@FUZZ
@given(st.text(max_size=300))
def test_random_text_is_only_ever_a_diagnostic(text: str) -> None:
    try:
        parse_yaml(text)
    except SpecError as exc:
        assert exc.diagnostics


@FUZZ
@given(values)
def test_random_documents_as_agent_yaml(tmp_path: Path, data: Any) -> None:
    target = tmp_path / "agent.yaml"
    target.write_text(dump(data), encoding="utf-8")
    load_quietly(target)


def _project(tmp_path: Path, name: str) -> Path:
    root = tmp_path / name
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir()
    (root / "tools.py").write_text("def lookup(q: str) -> str:\n    return q\n", encoding="utf-8")
    return root


@FUZZ
@given(mutated(VALID_AGENT))
def test_mutated_agent_yaml(tmp_path: Path, data: dict[str, Any]) -> None:
    root = _project(tmp_path, "agent")
    (root / "agent.yaml").write_text(dump(data), encoding="utf-8")
    load_quietly(root)


@FUZZ
@given(mutated(VALID_IMAGE), st.sampled_from(["", "name: x\n", "---\n- 1\n", "{{{"]))
def test_mutated_image(tmp_path: Path, data: dict[str, Any], mcp: str) -> None:
    root = _project(tmp_path, "image")
    (root / "config.yaml").write_text(dump(data), encoding="utf-8")
    (root / "tools" / "mcp").mkdir(parents=True)
    (root / "tools" / "mcp" / "m.yaml").write_text(mcp, encoding="utf-8")
    (root / "skills" / "s").mkdir(parents=True)
    (root / "skills" / "s" / "SKILL.md").write_text(f"---\n{mcp}\n---\n", encoding="utf-8")
    load_quietly(root)
