"""Packing an image with its `${VAR}` references resolved: what is sent to a server.

A server never expands an uploaded image's `${VAR}` against its own environment (that
would hand its secrets to whoever uploads), so the author's environment fills them in
on the way out, the way a local run would: in the documents the loader expands
(`config.yaml`, `tools/mcp/*.yaml`, `tests/*.yaml`, and the same in each sub-agent under
`agents/<name>/`), on parsed values, never on raw text. Other files travel as they are.

    result = pack_resolved(Path("my-image"), Path("out.tar.gz"), environment)
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path

import yaml

from holodeck.spec.archives.pack import PackResult, image_files, pack_image
from holodeck.spec.diagnostics import Collector, SpecError
from holodeck.spec.env_references import substitute
from holodeck.spec.yaml.limits import DEFINITION, TEST_CASES
from holodeck.spec.yaml.source import read_yaml

_YAML = (".yaml", ".yml")


def pack_resolved(source: Path, output: Path, env: Mapping[str, str]) -> PackResult:
    """Pack the image directory `source` into `output` with every `${VAR}` the loader
    would expand replaced from `env`; raise `SpecError` naming each variable `env` lacks
    (file, line and field), before anything is written."""
    collector = Collector()
    with tempfile.TemporaryDirectory(prefix="holodeck-push-") as scratch:
        copy = Path(scratch) / (source.resolve().name or "image")
        for rel, path in image_files(source):
            target = copy / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            if _expanded(rel) and b"${" in path.read_bytes():
                target.write_text(_resolved(path, rel, env, collector), encoding="utf-8")
            else:
                shutil.copy2(path, target)
        collector.raise_if_errors()
        return pack_image(copy, output)


def _expanded(rel: str) -> bool:
    """`rel` (a posix path in the image) is a document the loader expands `${VAR}` in."""
    parts = rel.split("/")
    while len(parts) > 2 and parts[0] == "agents":  # a sub-agent is an image of its own
        parts = parts[2:]
    if len(parts) == 1:
        return parts[0] in ("config.yaml", "agent.yaml")
    if parts[-1].endswith(_YAML):
        return parts[:-1] in (["tools", "mcp"], ["tests"])
    return False


def _resolved(path: Path, rel: str, env: Mapping[str, str], collector: Collector) -> str:
    """The document at `path` with its values substituted, written back as YAML."""
    try:
        doc = read_yaml(path, TEST_CASES if rel.split("/")[-2:-1] == ["tests"] else DEFINITION)
    except SpecError as exc:
        collector.extend(exc.diagnostics)
        return ""
    data = substitute(doc, env, collector)
    dumped: str = yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=1_000_000)
    return dumped
